//! Talking to the service manager that started the server: systemd's readiness protocol
//! (`Type=notify`). The server says `READY=1` once its database is open and every listener
//! is bound, so `systemctl start` returns, and units ordered after Kauri start, only when
//! clients can be served; `RELOADING=1` then `READY=1` around a reload (SIGHUP); and
//! `STOPPING=1` when it begins to stop. Started any other way
//! (no `NOTIFY_SOCKET` in the environment), it sends nothing.
//!
//! The protocol is one datagram of `KEY=value` lines to the Unix socket named by
//! `NOTIFY_SOCKET`: a path, or a name in Linux's abstract namespace when it starts with
//! `@`.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixDatagram;

/// The environment variable a service manager sets to its socket.
const NOTIFY_SOCKET: &str = "NOTIFY_SOCKET";

/// Sends `state` (`KEY=value` lines) to the service manager; returns whether there was
/// one to tell.
pub fn notify(state: &str) -> io::Result<bool> {
    match std::env::var_os(NOTIFY_SOCKET) {
        Some(socket) if !socket.is_empty() => send(&socket, state).map(|()| true),
        _ => Ok(false),
    }
}

/// Tells the service manager, reporting a failure on stderr: the server serves either
/// way, and a manager that missed `READY=1` says so itself when its timeout passes.
pub fn tell(state: &str) {
    if let Err(e) = notify(state) {
        eprintln!("kauri: warning: could not notify the service manager ({state:?}): {e}");
    }
}

/// Microseconds on the monotonic clock, which `RELOADING=1` carries so the manager can
/// tell this reload from an earlier one.
pub fn monotonic_usec() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the one struct passed.
    if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } != 0 {
        return 0;
    }
    (ts.tv_sec as u64) * 1_000_000 + (ts.tv_nsec as u64) / 1_000
}

fn send(socket: &OsStr, state: &str) -> io::Result<()> {
    let out = UnixDatagram::unbound()?;
    match socket.as_bytes().strip_prefix(b"@") {
        Some(name) => send_abstract(&out, name, state),
        None => out.send_to(state.as_bytes(), socket).map(drop),
    }
}

#[cfg(target_os = "linux")]
fn send_abstract(out: &UnixDatagram, name: &[u8], state: &str) -> io::Result<()> {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
    out.send_to_addr(state.as_bytes(), &addr).map(drop)
}

#[cfg(not(target_os = "linux"))]
fn send_abstract(_: &UnixDatagram, _: &[u8], _: &str) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "abstract socket names exist on Linux only",
    ))
}

#[cfg(test)]
mod tests {
    use super::send;
    use std::os::unix::net::UnixDatagram;

    fn received(sock: &UnixDatagram) -> String {
        sock.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut buf = [0u8; 256];
        let n = sock.recv(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    #[test]
    fn sends_to_a_socket_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let sock = UnixDatagram::bind(&path).unwrap();
        send(path.as_os_str(), "READY=1\nSTATUS=serving").unwrap();
        assert_eq!(received(&sock), "READY=1\nSTATUS=serving");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn sends_to_an_abstract_name() {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("kauri-notify-test-{}", std::process::id());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let sock = UnixDatagram::bind_addr(&addr).unwrap();
        send(format!("@{name}").as_ref(), "STOPPING=1").unwrap();
        assert_eq!(received(&sock), "STOPPING=1");
    }

    #[test]
    fn a_missing_socket_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(send(dir.path().join("absent").as_os_str(), "READY=1").is_err());
    }
}
