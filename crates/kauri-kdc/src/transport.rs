//! How Kerberos messages arrive and leave: UDP datagrams, and TCP streams where each
//! message carries a 4-byte big-endian length (RFC 4120 §7.2). The KDC and the
//! password-change service (RFC 3244) share it; each hands a whole request to its
//! [`Service`] and sends back what it answers.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kauri_net::{Admission, TcpUdp};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};

/// Largest request taken over TCP. AD's own limit for a ticket (MaxTokenSize) is 48,000
/// bytes; a request carries at most one ticket and an authenticator.
pub const MAX_TCP_REQUEST: usize = 256 * 1024;

/// Largest reply sent over UDP (AD's MaxDatagramReplySize): anything bigger is answered
/// with KRB_ERR_RESPONSE_TOO_BIG so the client asks again over TCP.
pub const MAX_UDP_REPLY: usize = 1465;

/// A TCP connection idle this long between requests is closed.
const IDLE: Duration = Duration::from_secs(30);

/// What answers requests: the KDC or the password-change service.
pub trait Service: Send + Sync + 'static {
    /// The answer to one request (`None`: send nothing — a datagram too broken to answer).
    fn handle(
        &self,
        request: Vec<u8>,
        peer: SocketAddr,
        udp: bool,
    ) -> impl Future<Output = Option<Vec<u8>>> + Send;

    /// The error telling a UDP client that the answer to `request` is too big for a
    /// datagram; `None` when there is no such message (the reply is then sent as is).
    fn too_big(&self, request: &[u8]) -> Option<Vec<u8>>;

    /// The error for a TCP request longer than [`MAX_TCP_REQUEST`] (or using the reserved
    /// high bit of the length), sent before the connection is closed.
    fn too_long(&self) -> Option<Vec<u8>>;
}

/// The listeners of one service.
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

    /// Serves `service` until the task is dropped.
    pub async fn run<S: Service>(self, service: Arc<S>, max_connections: usize) {
        let admission = TcpUdp::admission(max_connections);
        let mut tasks = tokio::task::JoinSet::new();
        for l in self.0.tcp {
            tasks.spawn(accept_loop(l, service.clone(), admission.clone()));
        }
        for s in self.0.udp {
            tasks.spawn(udp_loop(s, service.clone()));
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

/// One TCP connection: requests one after another, each answered before the next is read.
async fn serve_tcp<S: Service>(mut stream: TcpStream, peer: SocketAddr, service: Arc<S>) {
    loop {
        let mut len = [0u8; 4];
        match tokio::time::timeout(IDLE, stream.read_exact(&mut len)).await {
            Ok(Ok(_)) => {}
            _ => return,
        }
        let n = u32::from_be_bytes(len);
        if n & 0x8000_0000 != 0 || n as usize > MAX_TCP_REQUEST {
            if let Some(err) = service.too_long() {
                let _ = write_framed(&mut stream, &err).await;
            }
            return;
        }
        let mut request = vec![0u8; n as usize];
        match tokio::time::timeout(IDLE, stream.read_exact(&mut request)).await {
            Ok(Ok(_)) => {}
            _ => return,
        }
        let Some(reply) = service.handle(request, peer, false).await else {
            return;
        };
        if write_framed(&mut stream, &reply).await.is_err() {
            return;
        }
    }
}

async fn write_framed(stream: &mut TcpStream, reply: &[u8]) -> std::io::Result<()> {
    let len = u32::try_from(reply.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(4 + reply.len());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(reply);
    stream.write_all(&out).await
}

/// Datagrams being answered at once; past it new ones are dropped (the client retries, or
/// moves to TCP), so a flood cannot pile up work.
const MAX_UDP_IN_FLIGHT: usize = 1024;

async fn udp_loop<S: Service>(socket: Arc<UdpSocket>, service: Arc<S>) {
    let mut buf = vec![0u8; 65_536];
    let in_flight = Arc::new(tokio::sync::Semaphore::new(MAX_UDP_IN_FLIGHT));
    loop {
        let (n, peer) = match socket.recv_from(&mut buf).await {
            Ok(x) => x,
            Err(e) => {
                // ICMP errors from earlier replies surface here on some systems.
                tracing::debug!(error = %e, "kerberos: udp receive failed");
                continue;
            }
        };
        let Ok(permit) = in_flight.clone().try_acquire_owned() else {
            continue;
        };
        let request = buf[..n].to_vec();
        let service = service.clone();
        let socket = socket.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let Some(mut reply) = service.handle(request.clone(), peer, true).await else {
                return;
            };
            if reply.len() > MAX_UDP_REPLY {
                if let Some(err) = service.too_big(&request) {
                    reply = err;
                }
            }
            let _ = socket.send_to(&reply, peer).await;
        });
    }
}
