//! The per-request time limit: once the first bytes of a request have arrived, the whole
//! request must arrive within a set time, so a client sending one byte at a time cannot hold
//! a connection (and its buffers) for as long as it likes.
//!
//! The protocol's frame decoder knows where requests begin and end and reports it to a
//! [`RequestClock`]; the [`Guarded`] stream under the decoder starts the clock when the
//! decoder waits for the rest of a request, and fails the read with
//! [`std::io::ErrorKind::TimedOut`] when the time is up.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// What the frame decoder tells the stream beneath it about request boundaries.
#[derive(Debug, Default)]
pub struct RequestClock {
    /// Bytes of an incomplete request are buffered.
    partial: AtomicBool,
    /// A request was completed since the stream last looked.
    completed: AtomicBool,
}

impl RequestClock {
    /// A clock to share between a decoder and its [`Guarded`] stream.
    pub fn new() -> Arc<RequestClock> {
        Arc::new(RequestClock::default())
    }

    /// Called by the decoder after each decode: whether it produced a request, and whether
    /// bytes of another (incomplete) one are left in its buffer.
    pub fn decoded(&self, produced: bool, leftover: bool) {
        if produced {
            self.completed.store(true, Ordering::Relaxed);
        }
        self.partial.store(leftover, Ordering::Relaxed);
    }
}

/// What a [`Guarded`] read fails with (inside a [`std::io::ErrorKind::TimedOut`] error)
/// when a started request did not arrive whole in time.
#[derive(Debug)]
struct RequestTimeout;

impl std::fmt::Display for RequestTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a request did not arrive whole in time")
    }
}

impl std::error::Error for RequestTimeout {}

/// Whether an I/O error is a [`Guarded`] read's per-request timeout.
pub fn is_request_timeout(e: &std::io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.downcast_ref::<RequestTimeout>().is_some())
}

/// A byte stream whose reads fail once a started request has not arrived whole within the
/// limit.
pub struct Guarded<T> {
    inner: T,
    clock: Arc<RequestClock>,
    limit: Duration,
    timer: Option<Pin<Box<Sleep>>>,
}

impl<T> Guarded<T> {
    /// Guards `inner`, with `clock` fed by the decoder reading from it; a zero `limit`
    /// guards nothing.
    pub fn new(inner: T, clock: Arc<RequestClock>, limit: Duration) -> Guarded<T> {
        Guarded {
            inner,
            clock,
            limit,
            timer: None,
        }
    }

    /// The stream underneath (for StartTLS, which wraps it).
    pub fn into_inner(self) -> T {
        self.inner
    }

    /// The clock the decoder feeds.
    pub fn clock(&self) -> &Arc<RequestClock> {
        &self.clock
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.clock.completed.swap(false, Ordering::Relaxed) {
            this.timer = None;
        }
        if this.limit.is_zero() {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        if this.clock.partial.load(Ordering::Relaxed) {
            if this.timer.is_none() {
                this.timer = Some(Box::pin(tokio::time::sleep_until(
                    Instant::now() + this.limit,
                )));
            }
        } else {
            this.timer = None;
        }
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(r) => Poll::Ready(r),
            Poll::Pending => {
                let expired = this
                    .timer
                    .as_mut()
                    .is_some_and(|t| t.as_mut().poll(cx).is_ready());
                if expired {
                    Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        RequestTimeout,
                    )))
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Reads 4-byte requests the way a frame decoder would, feeding the clock.
    async fn read_request<T: AsyncRead + Unpin>(
        g: &mut Guarded<T>,
        buf: &mut Vec<u8>,
    ) -> std::io::Result<Vec<u8>> {
        loop {
            if buf.len() >= 4 {
                let req: Vec<u8> = buf.drain(..4).collect();
                g.clock().decoded(true, !buf.is_empty());
                return Ok(req);
            }
            g.clock().decoded(false, !buf.is_empty());
            let mut chunk = [0u8; 16];
            let n = g.read(&mut chunk).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            buf.extend_from_slice(&chunk[..n]);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_sender_times_out_and_an_idle_one_does_not() {
        let (client, server) = tokio::io::duplex(64);
        let mut g = Guarded::new(server, RequestClock::new(), Duration::from_secs(10));
        let mut client = client;
        let mut buf = Vec::new();
        // Idle for longer than the limit: nothing started, nothing times out.
        let writer = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            client.write_all(b"abcd").await.unwrap();
            // Then one byte every 4 seconds: the request needs 16 seconds.
            for b in b"efgh" {
                tokio::time::sleep(Duration::from_secs(4)).await;
                client.write_all(&[*b]).await.unwrap();
            }
            client
        });
        assert_eq!(read_request(&mut g, &mut buf).await.unwrap(), b"abcd");
        let e = read_request(&mut g, &mut buf).await.unwrap_err();
        assert!(is_request_timeout(&e), "{e}");
        let _ = writer.await;
    }

    #[tokio::test(start_paused = true)]
    async fn steady_requests_never_time_out() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut g = Guarded::new(server, RequestClock::new(), Duration::from_secs(10));
        let writer = tokio::spawn(async move {
            // Each request arrives in two halves 6 s apart: within the limit, although the
            // connection is busy for far longer than it.
            for _ in 0..10 {
                client.write_all(b"ab").await.unwrap();
                tokio::time::sleep(Duration::from_secs(6)).await;
                client.write_all(b"cd").await.unwrap();
            }
            client
        });
        let mut buf = Vec::new();
        for _ in 0..10 {
            assert_eq!(read_request(&mut g, &mut buf).await.unwrap(), b"abcd");
        }
        let _ = writer.await;
    }
}
