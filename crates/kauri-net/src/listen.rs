//! Listening sockets with room for bursts of connections, and the accept loop the
//! request/response services (Kerberos, DNS) share.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket, TcpStream, UdpSocket};

use crate::{Admission, Limits};

/// A service's TCP listeners with a UDP socket on each one's address (Kerberos and DNS
/// answer on both); the UDP port follows the TCP one, so `:0` gives one port for both.
pub struct TcpUdp {
    /// The TCP listeners.
    pub tcp: Vec<TcpListener>,
    /// The UDP sockets, one per listener.
    pub udp: Vec<Arc<UdpSocket>>,
}

impl TcpUdp {
    /// Binds TCP and UDP on each address (`host:port`).
    pub async fn bind(addrs: &[String]) -> io::Result<TcpUdp> {
        let mut tcp = Vec::new();
        let mut udp = Vec::new();
        for a in addrs {
            let l = listen(a, 1024).await?;
            let bound = l.local_addr()?;
            udp.push(Arc::new(UdpSocket::bind(bound).await?));
            tcp.push(l);
        }
        Ok(TcpUdp { tcp, udp })
    }

    /// The addresses listened on.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.tcp
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .collect()
    }

    /// The connection table of such a service: `max_connections` places, no reserve and
    /// no per-address limits (each connection carries one request at a time).
    pub fn admission(max_connections: usize) -> Arc<Admission> {
        Admission::new(Limits {
            max_connections: max_connections.max(1),
            reserved_for_authenticated: 0,
            max_per_address: 0,
            max_unauthenticated_per_address: 0,
        })
    }
}

/// Binds a TCP listener on `addr` (`host:port`; the first address the name resolves to)
/// with an accept queue of `backlog` (the kernel caps it at `net.core.somaxconn`). A burst
/// of new connections larger than the queue is not refused but dropped by the kernel, and
/// each dropped client waits a second or more before trying again; the usual default of
/// 128 or 1,024 is too small for a server that takes thousands of connections.
pub async fn listen(addr: &str, backlog: u32) -> io::Result<TcpListener> {
    let mut last = None;
    for a in tokio::net::lookup_host(addr).await? {
        let socket = if a.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        match socket.bind(a).and_then(|()| socket.listen(backlog)) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{addr} names no address"),
        )
    }))
}

/// Accepts connections until the task is dropped: each one admitted by `admission` (a
/// refused one is closed at once) is served by `serve` on a task of its own, which ends
/// when `serve` does or when the table gives its place to a newcomer. A failed accept
/// (no descriptors left) is retried after a short pause.
pub async fn accept_admitted<F, Fut>(l: TcpListener, admission: Arc<Admission>, serve: F)
where
    F: Fn(TcpStream, SocketAddr) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    loop {
        let (stream, peer) = match l.accept().await {
            Ok(x) => x,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = admission.admit(Some(peer.ip())) else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let work = serve(stream, peer);
        tokio::spawn(async move {
            tokio::select! {
                _ = work => {}
                _ = slot.evicted() => {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn listens_on_a_free_port_and_refuses_a_bad_address() {
        let l = listen("127.0.0.1:0", 4096).await.unwrap();
        let port = l.local_addr().unwrap().port();
        assert_ne!(port, 0);
        let _c = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let (_s, _) = l.accept().await.unwrap();
        assert!(listen("not an address", 16).await.is_err());
    }
}
