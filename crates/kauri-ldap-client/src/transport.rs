//! The byte stream under a connection: plain TCP, TLS over TCP, or a Unix socket, behind
//! one type so the framing above does not care which.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::error::ClientError;
use crate::tls;
use crate::url::LdapUrl;

/// An open connection's stream.
pub(crate) enum Transport {
    /// Plain TCP.
    Tcp(TcpStream),
    /// TLS over TCP (`ldaps://`, or after StartTLS).
    Tls(Box<TlsStream<Rewind<TcpStream>>>),
    /// A local Unix socket (`ldapi://`).
    #[cfg(unix)]
    Unix(tokio::net::UnixStream),
    /// No stream: reads see the end, writes fail. Stands in while StartTLS holds the
    /// socket, and stays if the handshake fails.
    Closed,
}

impl Transport {
    /// Whether what travels on it is private: TLS, or a socket on this machine.
    pub(crate) fn is_encrypted(&self) -> bool {
        match self {
            Transport::Tls(_) => true,
            #[cfg(unix)]
            Transport::Unix(_) => true,
            Transport::Tcp(_) | Transport::Closed => false,
        }
    }
}

/// Waits for `fut`, at most `limit` when one is given.
pub(crate) async fn within<T>(
    limit: Option<Duration>,
    what: impl FnOnce() -> String,
    fut: impl std::future::Future<Output = T>,
) -> Result<T, ClientError> {
    match limit {
        None => Ok(fut.await),
        Some(after) => tokio::time::timeout(after, fut)
            .await
            .map_err(|_| ClientError::Timeout { op: what(), after }),
    }
}

/// Opens the stream `url` names: TCP with Nagle's algorithm off (and the TLS handshake for
/// `ldaps://`), or the Unix socket.
pub(crate) async fn open(
    url: &LdapUrl,
    tls: &tls::TlsOptions,
    limit: Option<Duration>,
) -> Result<Transport, ClientError> {
    match url {
        LdapUrl::Ldap { host, port } => Ok(Transport::Tcp(
            tcp(host, *port, &url.authority(), limit).await?,
        )),
        LdapUrl::Ldaps { host, port } => {
            // One limit for the whole: the TCP connection and the handshake.
            let addr = url.authority();
            let what = || format!("connecting to {addr}");
            within(limit, what, async {
                let stream = tcp(host, *port, &addr, None).await?;
                handshake(stream, Bytes::new(), host, &addr, tls).await
            })
            .await?
        }
        LdapUrl::Ldapi { path } => unix(path, limit).await,
    }
}

async fn tcp(
    host: &str,
    port: u16,
    addr: &str,
    limit: Option<Duration>,
) -> Result<TcpStream, ClientError> {
    let connect_err = |source| ClientError::Connect {
        addr: addr.to_string(),
        source,
    };
    let stream = within(
        limit,
        || format!("connecting to {addr}"),
        TcpStream::connect((host, port)),
    )
    .await?
    .map_err(connect_err)?;
    stream.set_nodelay(true).map_err(connect_err)?;
    Ok(stream)
}

#[cfg(unix)]
async fn unix(path: &std::path::Path, limit: Option<Duration>) -> Result<Transport, ClientError> {
    let addr = path.display().to_string();
    let stream = within(
        limit,
        || format!("connecting to {addr}"),
        tokio::net::UnixStream::connect(path),
    )
    .await?
    .map_err(|source| ClientError::Connect { addr, source })?;
    Ok(Transport::Unix(stream))
}

#[cfg(not(unix))]
async fn unix(path: &std::path::Path, _limit: Option<Duration>) -> Result<Transport, ClientError> {
    Err(ClientError::Connect {
        addr: path.display().to_string(),
        source: io::Error::new(
            io::ErrorKind::Unsupported,
            "Unix sockets are not available on this platform",
        ),
    })
}

/// The TLS handshake on `stream` for `host`; `early` holds bytes already read from the
/// socket, which belong to the TLS stream.
pub(crate) async fn handshake(
    stream: TcpStream,
    early: Bytes,
    host: &str,
    addr: &str,
    tls: &tls::TlsOptions,
) -> Result<Transport, ClientError> {
    let config = tls.client_config()?;
    let name = tls::server_name(host)?;
    let connector = TlsConnector::from(Arc::clone(&config));
    let stream = Rewind {
        early,
        inner: stream,
    };
    let tls = connector
        .connect(name, stream)
        .await
        .map_err(|e| ClientError::Tls(format!("handshake with {addr} failed: {e}")))?;
    Ok(Transport::Tls(Box::new(tls)))
}

/// A stream that first yields bytes read from it earlier.
pub(crate) struct Rewind<S> {
    early: Bytes,
    inner: S,
}

impl<S: AsyncRead + Unpin> AsyncRead for Rewind<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.early.is_empty() {
            let n = self.early.len().min(buf.remaining());
            buf.put_slice(&self.early[..n]);
            self.early.advance(n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Rewind<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "the connection is closed")
}

impl AsyncRead for Transport {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            #[cfg(unix)]
            Transport::Unix(s) => Pin::new(s).poll_read(cx, buf),
            Transport::Closed => Poll::Ready(Ok(())),
        }
    }
}

impl AsyncWrite for Transport {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            #[cfg(unix)]
            Transport::Unix(s) => Pin::new(s).poll_write(cx, buf),
            Transport::Closed => Poll::Ready(Err(closed())),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
            #[cfg(unix)]
            Transport::Unix(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Transport::Closed => Poll::Ready(Err(closed())),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Transport::Tcp(s) => s.is_write_vectored(),
            Transport::Tls(s) => s.is_write_vectored(),
            #[cfg(unix)]
            Transport::Unix(s) => s.is_write_vectored(),
            Transport::Closed => false,
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_flush(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            #[cfg(unix)]
            Transport::Unix(s) => Pin::new(s).poll_flush(cx),
            Transport::Closed => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            #[cfg(unix)]
            Transport::Unix(s) => Pin::new(s).poll_shutdown(cx),
            Transport::Closed => Poll::Ready(Ok(())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn rewind_yields_the_early_bytes_first() {
        let (a, mut b) = tokio::io::duplex(64);
        tokio::io::AsyncWriteExt::write_all(&mut b, b" world")
            .await
            .unwrap();
        drop(b);
        let mut r = Rewind {
            early: Bytes::from_static(b"hello"),
            inner: a,
        };
        let mut out = String::new();
        r.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, "hello world");
    }
}
