//! Dissectors: what the summary says about each application message of a capture.
//!
//! A conversation's protocol is chosen by port (the lower port first, as protocol
//! analysers do), or recognised by its first bytes for DCE/RPC on dynamic ports. Each
//! message becomes an [`Outcome`]: a [`Record`] (the protocol-specific columns of one
//! summary line) or the name of a protocol the summary does not list. The protocols listed
//! are the ones Samba's summarizer lists: `dns`, `kerberos`, `ldap`, `cldap`, `nbns`,
//! `smb`, `smb2`, `dcerpc` and the RPC interfaces `epm`, `rpc_netlogon`, `lsarpc`, `samr`,
//! `drsuapi`, `dnsserver`, `srvsvc`, and the mailslot protocols `browser` and
//! `smb_netlogon`.

pub mod ber;
pub mod dcerpc;
pub mod dns;
pub mod kerberos;
pub mod ldap;
pub mod names;
pub mod rules;
pub mod smb;
pub mod stream;

/// The text a malformed message's line carries after its two empty columns.
pub const MALFORMED: &str = "** Malformed Packet ** Malformed Packet (Exception occurred)";
/// The description of an LDAP message whose content cannot be read (sealed by the
/// security layer a SASL bind negotiated).
pub const UNKNOWN: &str = "*** Unknown ***";

/// How a record was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// Decoded (perhaps partly, when the capture cut the message short).
    Decoded,
    /// Not a valid message of its protocol.
    Malformed,
    /// Present, but its content is encrypted.
    Unreadable,
}

/// The protocol-specific columns of one summary line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Protocol name (column 6).
    pub protocol: &'static str,
    /// Operation code (column 7).
    pub opcode: String,
    /// Description (column 8).
    pub desc: String,
    /// Protocol-specific extras (columns 9 and on).
    pub extra: Vec<String>,
    /// How it was read, for the statistics.
    pub kind: RecordKind,
}

impl Record {
    /// A decoded message with no extra columns.
    pub fn op(
        protocol: &'static str,
        opcode: impl Into<String>,
        desc: impl Into<String>,
    ) -> Record {
        Record {
            protocol,
            opcode: opcode.into(),
            desc: desc.into(),
            extra: Vec::new(),
            kind: RecordKind::Decoded,
        }
    }

    /// A message the capture cut short before its type: the protocol with empty columns
    /// (for Kerberos also an empty client column; for LDAP `*** Unknown ***`).
    pub fn cut_short(protocol: &'static str) -> Record {
        let mut r = Record::op(protocol, "", "");
        match protocol {
            "kerberos" => r.extra.push(String::new()),
            "ldap" | "cldap" => r.desc = UNKNOWN.to_string(),
            _ => {}
        }
        r
    }

    /// A malformed message, or one cut short when `cut`.
    pub fn bad(protocol: &'static str, cut: bool) -> Record {
        if cut {
            Record::cut_short(protocol)
        } else {
            Record::malformed(protocol)
        }
    }

    /// A message that is not valid for its protocol.
    pub fn malformed(protocol: &'static str) -> Record {
        Record {
            protocol,
            opcode: String::new(),
            desc: String::new(),
            extra: vec![MALFORMED.to_string()],
            kind: RecordKind::Malformed,
        }
    }
}

/// What one message amounts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A summary line.
    Record(Record),
    /// A message of a protocol the summary does not list (counted, not written).
    Ignored(&'static str),
}

/// The transport a conversation uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// TCP: messages framed within a byte stream.
    Tcp,
    /// UDP: one message (or more) per datagram.
    Udp,
}

/// The application protocol of a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum App {
    /// LDAP over TCP (389, global catalog 3268).
    Ldap,
    /// Connectionless LDAP over UDP 389.
    Cldap,
    /// DNS over UDP or TCP 53.
    Dns,
    /// Kerberos over UDP or TCP 88.
    Kerberos,
    /// Kerberos password changes over 464.
    Kpasswd,
    /// NetBIOS name service, UDP 137.
    Nbns,
    /// NetBIOS datagrams, UDP 138 (browser and logon mailslots).
    Nbdgm,
    /// SMB and SMB2 over NetBIOS sessions, TCP 139 and 445.
    Smb,
    /// Connection-oriented DCE/RPC (TCP 135, or recognised on a dynamic port).
    Dcerpc,
    /// A protocol known by its port that the summary does not list.
    Other(&'static str),
}

/// The protocol registered for one port.
pub fn app_for_port(transport: Transport, port: u16) -> Option<App> {
    use App::*;
    Some(match (transport, port) {
        (Transport::Tcp, 389 | 3268) => Ldap,
        (Transport::Udp, 389) => Cldap,
        (_, 53) => Dns,
        (_, 88) => Kerberos,
        (_, 464) => Kpasswd,
        (Transport::Udp, 137) => Nbns,
        (Transport::Udp, 138) => Nbdgm,
        (Transport::Tcp, 139 | 445) => Smb,
        (Transport::Tcp, 135) => Dcerpc,
        (Transport::Tcp, 636 | 3269 | 443 | 5986) => Other("tls"),
        (Transport::Tcp, 80 | 593 | 5985) => Other("http"),
        (Transport::Tcp, 22) => Other("ssh"),
        (Transport::Tcp, 9389) => Other("adws"),
        (Transport::Udp, 123) => Other("ntp"),
        (Transport::Udp, 67 | 68) => Other("dhcp"),
        (Transport::Udp, 135) => Other("dcerpc-udp"),
        (Transport::Udp, 161 | 162) => Other("snmp"),
        (Transport::Udp, 514) => Other("syslog"),
        (Transport::Udp, 1900) => Other("ssdp"),
        (Transport::Udp, 3702) => Other("ws-discovery"),
        (Transport::Udp, 5353) => Other("mdns"),
        (Transport::Udp, 5355) => Other("llmnr"),
        _ => return None,
    })
}

/// The protocol of a conversation between two ports: the lower port's, else the higher's.
pub fn app_for_ports(transport: Transport, a: u16, b: u16) -> Option<App> {
    let (low, high) = if a <= b { (a, b) } else { (b, a) };
    app_for_port(transport, low).or_else(|| app_for_port(transport, high))
}

/// How the bytes at the start of a stream buffer are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// A message of this many bytes (header included) starts here.
    Pdu(usize),
    /// The header is incomplete.
    NeedMore,
    /// The bytes are not the start of a message of the protocol.
    NotAStart,
}

/// What is remembered about one conversation between its messages.
#[derive(Debug)]
pub struct Session {
    /// The conversation's protocol, if known.
    pub app: Option<App>,
    rpc: dcerpc::RpcState,
    smb: smb::SmbState,
}

impl Session {
    /// A conversation of the given protocol.
    pub fn new(app: Option<App>) -> Session {
        Session {
            app,
            rpc: dcerpc::RpcState::default(),
            smb: smb::SmbState::default(),
        }
    }

    /// Where the first message in a TCP stream buffer ends. A conversation on an unknown
    /// port becomes DCE/RPC when its bytes look like it.
    pub fn framing(&mut self, buf: &[u8]) -> Framing {
        if self.app.is_none() && dcerpc::looks_like_pdu(buf) {
            self.app = Some(App::Dcerpc);
        }
        match self.app {
            Some(App::Ldap) => ldap::framing(buf),
            Some(App::Kerberos | App::Kpasswd) => kerberos::framing(buf),
            Some(App::Dns) => dns::framing(buf),
            Some(App::Smb) => smb::framing(buf),
            Some(App::Dcerpc) => dcerpc::framing(buf),
            _ => Framing::NotAStart,
        }
    }

    /// Whether the conversation's TCP bytes are framed into messages at all.
    pub fn frames_tcp(&self) -> bool {
        matches!(
            self.app,
            None | Some(
                App::Ldap | App::Kerberos | App::Kpasswd | App::Dns | App::Smb | App::Dcerpc
            )
        )
    }

    /// The outcomes of one message framed from a TCP stream; `cut` when bytes of it are
    /// missing from the capture.
    pub fn tcp_pdu(&mut self, pdu: &[u8], cut: bool) -> Vec<Outcome> {
        match self.app {
            Some(App::Ldap) => ldap::stream_pdu(pdu, cut),
            Some(App::Kerberos) => vec![kerberos::dissect(pdu.get(4..).unwrap_or(&[]), cut)],
            Some(App::Kpasswd) => vec![kerberos::kpasswd(pdu.get(4..).unwrap_or(&[]), cut)],
            Some(App::Dns) => vec![dns::dissect("dns", pdu.get(2..).unwrap_or(&[]), cut)],
            Some(App::Smb) => smb::nbss(&mut self.smb, &mut self.rpc, pdu, cut),
            Some(App::Dcerpc) => dcerpc::dissect(&mut self.rpc, [0; 16], pdu, cut),
            Some(App::Other(name)) => vec![Outcome::Ignored(name)],
            _ => Vec::new(),
        }
    }

    /// The outcomes of one UDP datagram; `cut` when the capture holds only part of it.
    pub fn datagram(&mut self, data: &[u8], cut: bool) -> Vec<Outcome> {
        match self.app {
            Some(App::Cldap) => ldap::cldap(data, cut),
            Some(App::Dns) => vec![dns::dissect("dns", data, cut)],
            Some(App::Nbns) => vec![dns::dissect("nbns", data, cut)],
            Some(App::Kerberos) => vec![kerberos::dissect(data, cut)],
            Some(App::Kpasswd) => vec![kerberos::kpasswd(data, cut)],
            Some(App::Nbdgm) => vec![smb::datagram(data, cut)],
            Some(App::Other(name)) => vec![Outcome::Ignored(name)],
            _ => Vec::new(),
        }
    }
}

/// Text for a byte string a dissector shows as a string: UTF-8 as it is, other bytes and
/// control characters (which would break a summary line) as `\xNN`.
pub(crate) fn text(bytes: &[u8]) -> String {
    let escape = |out: &mut String, b: u8| out.push_str(&format!("\\x{b:02x}"));
    let mut out = String::with_capacity(bytes.len());
    match std::str::from_utf8(bytes) {
        Ok(s) => {
            for c in s.chars() {
                if c.is_control() && c.is_ascii() {
                    escape(&mut out, c as u8);
                } else {
                    out.push(c);
                }
            }
        }
        Err(_) => {
            for b in bytes {
                if b.is_ascii() && !b.is_ascii_control() {
                    out.push(char::from(*b));
                } else {
                    escape(&mut out, *b);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_escapes_what_would_break_a_line() {
        assert_eq!(text(b"cn"), "cn");
        assert_eq!(text("caf\u{e9}".as_bytes()), "caf\u{e9}");
        assert_eq!(text(b"a\tb\n"), "a\\x09b\\x0a");
        assert_eq!(text(&[b'x', 0xff]), "x\\xff");
        assert_eq!(app_for_ports(Transport::Tcp, 50000, 389), Some(App::Ldap));
        assert_eq!(
            app_for_ports(Transport::Udp, 88, 50000),
            Some(App::Kerberos)
        );
        assert_eq!(app_for_ports(Transport::Tcp, 50000, 50001), None);
    }
}
