//! How DNS messages arrive and leave: UDP datagrams, and TCP streams where each message
//! carries a 2-byte big-endian length (RFC 1035 §4.2.2, RFC 7766). Replies over UDP never
//! exceed what the request allows (512 bytes, or its EDNS buffer size), so the server
//! cannot be used to amplify traffic; an optional per-address rate limit drops the rest.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kauri_net::{Admission, TcpUdp};
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};

/// A TCP connection idle this long between messages is closed (RFC 7766 suggests
/// seconds, not minutes).
const IDLE: Duration = Duration::from_secs(10);

/// Datagrams being answered at once; past it new ones are dropped.
const MAX_UDP_IN_FLIGHT: usize = 1024;

/// What answers DNS messages.
pub trait Service: Send + Sync + 'static {
    /// The answer to one message: the reply messages (several only for a zone transfer
    /// over TCP), empty to send nothing. A UDP reply must fit what the request allows.
    fn handle(
        &self,
        request: Vec<u8>,
        peer: SocketAddr,
        udp: bool,
    ) -> impl Future<Output = Vec<Vec<u8>>> + Send;
}

/// The listeners of the DNS server.
pub struct Listeners(TcpUdp);

impl Listeners {
    /// Binds TCP and UDP on each address (`host:port`).
    pub async fn bind(addrs: &[String]) -> std::io::Result<Listeners> {
        TcpUdp::bind(addrs).await.map(Listeners)
    }

    /// The addresses listened on.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.0.local_addrs()
    }

    /// Serves until the task is dropped; `rate_limit` is UDP replies per second per
    /// source address (0: none).
    pub async fn run<S: Service>(self, service: Arc<S>, max_connections: usize, rate_limit: u32) {
        let admission = TcpUdp::admission(max_connections);
        let limiter = Arc::new(RateLimiter::new(rate_limit));
        let mut tasks = tokio::task::JoinSet::new();
        for l in self.0.tcp {
            tasks.spawn(accept_loop(l, service.clone(), admission.clone()));
        }
        for s in self.0.udp {
            tasks.spawn(udp_loop(s, service.clone(), limiter.clone()));
        }
        while tasks.join_next().await.is_some() {}
    }
}

async fn accept_loop<S: Service>(l: TcpListener, service: Arc<S>, admission: Arc<Admission>) {
    kauri_net::accept_admitted(l, admission, |stream, peer| {
        serve_tcp(stream, peer, service.clone())
    })
    .await;
}

/// One TCP connection: messages one after another (zone transfers answer with several).
async fn serve_tcp<S: Service>(mut stream: TcpStream, peer: SocketAddr, service: Arc<S>) {
    loop {
        let mut len = [0u8; 2];
        match tokio::time::timeout(IDLE, stream.read_exact(&mut len)).await {
            Ok(Ok(_)) => {}
            _ => return,
        }
        let n = u16::from_be_bytes(len) as usize;
        let mut request = vec![0u8; n];
        match tokio::time::timeout(IDLE, stream.read_exact(&mut request)).await {
            Ok(Ok(_)) => {}
            _ => return,
        }
        let replies = service.handle(request, peer, false).await;
        if replies.is_empty() {
            return;
        }
        if stream.write_all(&frame_all(&replies)).await.is_err() {
            return;
        }
    }
}

/// Frames messages for TCP: each with its 2-byte length.
pub fn frame_all(messages: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in messages {
        let len = u16::try_from(m.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&m[..usize::from(len).min(m.len())]);
    }
    out
}

async fn udp_loop<S: Service>(socket: Arc<UdpSocket>, service: Arc<S>, limiter: Arc<RateLimiter>) {
    let mut buf = vec![0u8; 65_536];
    let in_flight = Arc::new(tokio::sync::Semaphore::new(MAX_UDP_IN_FLIGHT));
    loop {
        let (n, peer) = match socket.recv_from(&mut buf).await {
            Ok(x) => x,
            Err(e) => {
                tracing::debug!(error = %e, "dns: udp receive failed");
                continue;
            }
        };
        if !limiter.allow(peer.ip()) {
            continue;
        }
        let Ok(permit) = in_flight.clone().try_acquire_owned() else {
            continue;
        };
        let request = buf[..n].to_vec();
        let service = service.clone();
        let socket = socket.clone();
        tokio::spawn(async move {
            let _permit = permit;
            if let Some(reply) = service.handle(request, peer, true).await.first() {
                let _ = socket.send_to(reply, peer).await;
            }
        });
    }
}

/// Replies per second per source address, counted in one-second windows.
struct RateLimiter {
    per_second: u32,
    seen: Mutex<HashMap<IpAddr, (Instant, u32)>>,
}

/// Addresses remembered at most; past it the table starts afresh.
const MAX_TRACKED: usize = 65_536;

impl RateLimiter {
    fn new(per_second: u32) -> RateLimiter {
        RateLimiter {
            per_second,
            seen: Mutex::new(HashMap::new()),
        }
    }

    fn allow(&self, ip: IpAddr) -> bool {
        if self.per_second == 0 {
            return true;
        }
        let now = Instant::now();
        let mut seen = self.seen.lock();
        if seen.len() >= MAX_TRACKED {
            seen.retain(|_, (start, _)| now.duration_since(*start) < Duration::from_secs(1));
            if seen.len() >= MAX_TRACKED {
                seen.clear();
            }
        }
        let slot = seen.entry(ip).or_insert((now, 0));
        if now.duration_since(slot.0) >= Duration::from_secs(1) {
            *slot = (now, 0);
        }
        slot.1 += 1;
        slot.1 <= self.per_second
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_limit_counts_per_address() {
        let l = RateLimiter::new(2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        assert!(l.allow(a) && l.allow(a) && !l.allow(a));
        assert!(l.allow(b));
        assert!(RateLimiter::new(0).allow(a));
    }
}
