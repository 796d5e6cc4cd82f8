//! Names outside the served zones, sent on to the configured forwarders (a client that
//! asked for recursion gets the forwarder's answer, relayed as it came).

use std::net::SocketAddr;
use std::time::Duration;

use kauri_dns_proto::wire::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};

/// How long one forwarder has to answer.
const TIMEOUT: Duration = Duration::from_secs(2);

/// The forwarders, tried in order.
#[derive(Debug, Clone)]
pub struct Forwarder {
    servers: Vec<SocketAddr>,
}

impl Forwarder {
    /// Forwarders from `address` or `address:port` texts (port 53 by default); `None`
    /// when there are none. A text that is not an address is an error.
    pub fn from_config(list: &[String]) -> Result<Option<Forwarder>, String> {
        let mut servers = Vec::new();
        for t in list {
            let addr = t
                .parse::<SocketAddr>()
                .or_else(|_| {
                    t.parse::<std::net::IpAddr>()
                        .map(|ip| SocketAddr::new(ip, 53))
                })
                .map_err(|_| format!("forwarder '{t}' is not an address"))?;
            servers.push(addr);
        }
        Ok((!servers.is_empty()).then_some(Forwarder { servers }))
    }

    /// The first answer a forwarder gives to `query`, with the client's message id.
    pub async fn forward(&self, query: &Message) -> Option<Vec<u8>> {
        let bytes = query.encode();
        for server in &self.servers {
            match tokio::time::timeout(TIMEOUT, ask(*server, &bytes)).await {
                Ok(Ok(answer)) => return Some(answer),
                Ok(Err(e)) => {
                    tracing::debug!(forwarder = %server, error = %e, "dns: forwarder failed")
                }
                Err(_) => tracing::debug!(forwarder = %server, "dns: forwarder timed out"),
            }
        }
        None
    }
}

async fn ask(server: SocketAddr, query: &[u8]) -> std::io::Result<Vec<u8>> {
    let local: SocketAddr = if server.is_ipv4() {
        "0.0.0.0:0".parse().map_err(std::io::Error::other)?
    } else {
        "[::]:0".parse().map_err(std::io::Error::other)?
    };
    let socket = UdpSocket::bind(local).await?;
    socket.connect(server).await?;
    socket.send(query).await?;
    let mut buf = vec![0u8; 65_535];
    loop {
        let n = socket.recv(&mut buf).await?;
        let answer = buf.get(..n).unwrap_or_default();
        // Only the answer to this query (same id) counts.
        if answer.get(..2) != query.get(..2) {
            continue;
        }
        let truncated = answer.get(2).is_some_and(|b| b & 0x02 != 0);
        if !truncated {
            return Ok(answer.to_vec());
        }
        return ask_tcp(server, query).await;
    }
}

async fn ask_tcp(server: SocketAddr, query: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut s = TcpStream::connect(server).await?;
    let len = u16::try_from(query.len()).map_err(std::io::Error::other)?;
    let mut out = len.to_be_bytes().to_vec();
    out.extend_from_slice(query);
    s.write_all(&out).await?;
    let mut l = [0u8; 2];
    s.read_exact(&mut l).await?;
    let mut answer = vec![0u8; usize::from(u16::from_be_bytes(l))];
    s.read_exact(&mut answer).await?;
    Ok(answer)
}
