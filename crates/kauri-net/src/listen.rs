//! Listening sockets with room for bursts of connections.

use std::io;

use tokio::net::{TcpListener, TcpSocket};

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
