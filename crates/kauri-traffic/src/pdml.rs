//! Reading tshark's PDML (`tshark -r CAPTURE -T pdml`) into summary lines, with the same
//! results as Samba's summarizer, so captures dissected by tshark (and its decryption
//! keys) can be summarised too.
//!
//! Each `<packet>` gives at most one line. Its protocol is the last `<proto>` element that
//! closes in it (tshark's "malformed" and "cut short" markers aside), and a line is written
//! only for the protocols the summary lists. The fields read are named ones: the capture
//! time, IP addresses (every packet's addresses get host ids, summarised or not), the IP
//! protocol, the stream index, and per protocol its operation field; when a field occurs
//! more than once the last one counts. Descriptions come from the operation field's label
//! (the text after its first colon, without a trailing `(N)`); see [`crate::dissect::rules`]
//! for DN signatures and filters. An AS-REQ's client name is read under either name
//! tshark has given its fields (`name_string`/`KerberosString` in older versions,
//! `cname_string`/`CNameString` in newer ones). A packet tshark marks malformed gets the line
//! `protocol`, two empty columns and `** Malformed Packet **` with tshark's last expert
//! message.

use std::collections::HashMap;
use std::io::BufRead;

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use crate::dissect::rules::{dn_signature, push_attribute, strip_filter, tidy_label, truthy};
use crate::summarize::{HostIds, Summary};
use crate::summary::Packet;

/// Why PDML could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PdmlError {
    /// The XML is not well formed (before any packet was read).
    #[error("reading PDML at byte {position}: {message}")]
    Xml {
        /// Byte offset in the input.
        position: u64,
        /// What the XML parser said.
        message: String,
    },
    /// The document is XML but not PDML (its root is not `<pdml>`).
    #[error("not PDML: the document's root element is <{0}>")]
    NotPdml(String),
}

/// Fields whose label and value are kept for formatting.
const KEPT_FIELDS: &[&str] = &[
    "dns.flags.opcode",
    "dns.flags.response",
    "netlogon.opnum",
    "kerberos.msg_type",
    "smb.cmd",
    "smb2.cmd",
    "ldap.protocolOp",
    "gss-api.OID",
    "ldap.gssapi_encrypted_payload",
    "ldap.baseObject",
    "ldap.scope",
    "ldap.operation",
    "ldap.authentication",
    "lsarpc.opnum",
    "samr.opnum",
    "dcerpc.pkt_type",
    "epm.opnum",
    "dnsserver.opnum",
    "drsuapi.opnum",
    "browser.command",
    "smb_netlogon.command",
    "srvsvc.opnum",
    "nbns.flags.opcode",
    "nbns.flags.response",
    "_ws.expert.message",
];

/// How each listed protocol's columns are made.
#[derive(Debug, Clone, Copy)]
enum Format {
    /// Operation number and label of this field.
    Opcode(&'static str),
    Ldap,
    Kerberos,
}

fn format_of(protocol: &str) -> Option<Format> {
    Some(match protocol {
        "dns" => Format::Opcode("dns.flags.response"),
        "rpc_netlogon" => Format::Opcode("netlogon.opnum"),
        "kerberos" => Format::Kerberos,
        "smb" => Format::Opcode("smb.cmd"),
        "smb2" => Format::Opcode("smb2.cmd"),
        "ldap" | "cldap" => Format::Ldap,
        "lsarpc" => Format::Opcode("lsarpc.opnum"),
        "samr" => Format::Opcode("samr.opnum"),
        "dcerpc" => Format::Opcode("dcerpc.pkt_type"),
        "epm" => Format::Opcode("epm.opnum"),
        "dnsserver" => Format::Opcode("dnsserver.opnum"),
        "drsuapi" => Format::Opcode("drsuapi.opnum"),
        "browser" => Format::Opcode("browser.command"),
        "smb_netlogon" => Format::Opcode("smb_netlogon.command"),
        "srvsvc" => Format::Opcode("srvsvc.opnum"),
        "nbns" => Format::Opcode("nbns.flags.response"),
        _ => return None,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Packet,
    Proto,
    Field,
    Other,
}

/// An open element and the attributes that matter.
#[derive(Debug)]
struct Element {
    kind: Kind,
    name: Option<String>,
    show: Option<String>,
    showname: Option<String>,
    value: Option<String>,
    hide: Option<String>,
    /// The `show` of the first child field named `ldap.type`, once seen.
    first_type: Option<Option<String>>,
}

/// A kept field's attributes.
#[derive(Debug, Clone, Default)]
struct Kept {
    show: Option<String>,
    showname: Option<String>,
}

/// What one packet has shown so far.
#[derive(Debug, Default)]
struct PacketState {
    timestamp: String,
    stream: String,
    ip_proto: String,
    source: String,
    dest: String,
    kept: HashMap<String, Kept>,
    malformed: bool,
    short: bool,
    ldap_filter: String,
    ldap_attributes: String,
    cname_type: Option<String>,
}

impl PacketState {
    fn show(&self, field: &str) -> Option<&str> {
        self.kept.get(field).and_then(|k| k.show.as_deref())
    }

    fn showname(&self, field: &str) -> Option<&str> {
        self.kept.get(field).and_then(|k| k.showname.as_deref())
    }

    /// A kept field's `show`, empty when missing, empty or `"0"`.
    fn show_or_empty(&self, field: &str) -> &str {
        self.show(field).filter(|s| truthy(s)).unwrap_or("")
    }

    fn opcode(&self, field: &str) -> String {
        let op = self.show(field).unwrap_or("");
        let desc = tidy_label(self.showname(field).unwrap_or(""), true);
        format!("{op}\t{desc}")
    }

    fn ldap(&self) -> String {
        if !self.kept.contains_key("ldap.protocolOp") && !self.kept.contains_key("gss-api.OID") {
            return format!("\t{}", crate::dissect::UNKNOWN);
        }
        let op = self.show("ldap.protocolOp").unwrap_or("");
        let desc = tidy_label(self.showname("ldap.protocolOp").unwrap_or(""), false);
        let extra_field = match op {
            "6" => Some("ldap.operation"),
            "0" => Some("ldap.authentication"),
            _ => None,
        };
        let (extra, extra_desc) = match extra_field {
            Some(f) => (
                self.show(f).unwrap_or(""),
                tidy_label(self.showname(f).unwrap_or(""), false),
            ),
            None => ("", String::new()),
        };
        format!(
            "{op}\t{desc}\t{}\t{}\t{}\t{}\t{extra}\t{extra_desc}\t{}",
            self.show_or_empty("ldap.scope"),
            dn_signature(self.show_or_empty("ldap.baseObject")),
            self.ldap_filter,
            self.ldap_attributes,
            self.show_or_empty("gss-api.OID"),
        )
    }

    fn kerberos(&self) -> String {
        let cname = self
            .cname_type
            .as_deref()
            .filter(|s| truthy(s))
            .unwrap_or("");
        format!(
            "{}\t{}\t{cname}",
            self.show_or_empty("kerberos.msg_type"),
            tidy_label(self.showname("kerberos.msg_type").unwrap_or(""), false)
        )
    }
}

/// The reader's state across the document.
#[derive(Debug, Default)]
struct State {
    stack: Vec<Element>,
    packet: PacketState,
    /// The protocol of the last `<proto>` closed (kept across packets, as a packet with
    /// no protocols of its own shows nothing new).
    protocol: Option<String>,
    hosts: HostIds<String>,
    summary: Summary,
}

fn attributes(e: &BytesStart<'_>, kind: Kind) -> Result<Element, quick_xml::Error> {
    let mut el = Element {
        kind,
        name: None,
        show: None,
        showname: None,
        value: None,
        hide: None,
        first_type: None,
    };
    if kind == Kind::Other || kind == Kind::Packet {
        return Ok(el);
    }
    for attr in e.attributes() {
        let attr = attr.map_err(quick_xml::Error::from)?;
        let slot = match attr.key.as_ref() {
            "name" => &mut el.name,
            "show" => &mut el.show,
            "showname" => &mut el.showname,
            "value" => &mut el.value,
            "hide" => &mut el.hide,
            _ => continue,
        };
        *slot = Some(attr.normalized_value(XmlVersion::Implicit1_0)?.into_owned());
    }
    Ok(el)
}

impl State {
    fn open(&mut self, el: Element) {
        if el.kind == Kind::Packet {
            self.packet = PacketState::default();
        }
        self.stack.push(el);
    }

    fn close(&mut self) {
        let Some(el) = self.stack.pop() else {
            return;
        };
        match el.kind {
            Kind::Packet => self.end_packet(),
            Kind::Proto => self.end_proto(&el),
            Kind::Field => self.end_field(el),
            Kind::Other => {}
        }
    }

    fn end_proto(&mut self, el: &Element) {
        let name = el.name.as_deref().unwrap_or("");
        if name == "_ws.malformed" && el.hide.as_deref() != Some("yes") {
            self.packet.malformed = true;
        }
        if name == "_ws.short" {
            self.packet.short = true;
        }
        if name != "_ws.malformed" && name != "_ws.short" {
            self.protocol = el.name.clone();
        }
    }

    /// Whether the open elements, innermost first, are fields with these names followed
    /// by a top-level protocol of a packet.
    fn under_top_proto(&self, fields: &[&str]) -> bool {
        let mut up = self.stack.iter().rev();
        for want in fields {
            match up.next() {
                Some(e) if e.kind == Kind::Field && e.name.as_deref() == Some(*want) => {}
                _ => return false,
            }
        }
        matches!(up.next(), Some(e) if e.kind == Kind::Proto)
            && matches!(up.next(), Some(e) if e.kind == Kind::Packet)
    }

    fn end_field(&mut self, el: Element) {
        let name = el.name.as_deref().unwrap_or("");
        let p = &mut self.packet;
        match name {
            "timestamp" => p.timestamp = el.value.clone().unwrap_or_default(),
            "ip.src" | "ipv6.src" => {
                p.source = self
                    .hosts
                    .id(el.show.clone().unwrap_or_default())
                    .to_string()
            }
            "ip.dst" | "ipv6.dst" => {
                p.dest = self
                    .hosts
                    .id(el.show.clone().unwrap_or_default())
                    .to_string()
            }
            "ip.proto" => p.ip_proto = el.value.clone().unwrap_or_default(),
            "udp.stream" | "tcp.stream" => p.stream = el.show.clone().unwrap_or_default(),
            "ldap.AttributeDescription" => {
                if let Some(show) = &el.show {
                    push_attribute(&mut p.ldap_attributes, show);
                }
            }
            "ldap.modification_element" | "ldap.AttributeList_item_element" => {
                if let Some(Some(show)) = &el.first_type {
                    push_attribute(&mut p.ldap_attributes, show);
                }
            }
            n if KEPT_FIELDS.contains(&n) => {
                p.kept.insert(
                    n.to_string(),
                    Kept {
                        show: el.show.clone(),
                        showname: el.showname.clone(),
                    },
                );
            }
            _ => {}
        }
        let parent = self.stack.last();
        let parent_field = parent.filter(|e| e.kind == Kind::Field);
        // A search request's filter: the request's direct child shown as "Filter: …".
        if parent_field.and_then(|e| e.name.as_deref()) == Some("ldap.searchRequest_element") {
            if let Some(show) = el.show.as_deref().filter(|s| truthy(s)) {
                if show.starts_with("Filter:") {
                    self.packet.ldap_filter = strip_filter(show);
                }
            }
        }
        // An AS-REQ's client name, in a Kerberos protocol directly under the packet.
        // Older tshark names its parts name_string/KerberosString, newer ones
        // cname_string/CNameString.
        let client_name = match name {
            "kerberos.KerberosString" => Some("kerberos.name_string"),
            "kerberos.CNameString" => Some("kerberos.cname_string"),
            _ => None,
        };
        if client_name.is_some_and(|list| {
            self.under_top_proto(&[
                list,
                "kerberos.cname_element",
                "kerberos.req_body_element",
                "kerberos.as_req_element",
            ])
        }) {
            let machine = el.show.as_deref().is_some_and(|s| s.ends_with('$'));
            self.packet.cname_type = Some(if machine { "machine" } else { "user" }.into());
        }
        if name == "ldap.type" {
            if let Some(parent) = self.stack.last_mut().filter(|e| e.kind == Kind::Field) {
                if parent.first_type.is_none() {
                    parent.first_type = Some(el.show);
                }
            }
        }
    }

    fn end_packet(&mut self) {
        let stats = &mut self.summary.stats;
        stats.frames += 1;
        let p = &self.packet;
        if p.short {
            stats.truncated += 1;
        }
        let format = self.protocol.as_deref().and_then(format_of);
        let (Some(format), Some(protocol)) = (format, self.protocol.as_deref()) else {
            stats.ignored += 1;
            return;
        };
        let data = if p.malformed {
            format!(
                "\t\t** Malformed Packet ** {}",
                p.show_or_empty("_ws.expert.message")
            )
        } else {
            match format {
                Format::Opcode(field) => p.opcode(field),
                Format::Ldap => p.ldap(),
                Format::Kerberos => p.kerberos(),
            }
        };
        let line = format!(
            "{}\t{}\t{}\t{}\t{}\t{protocol}\t{data}",
            p.timestamp, p.ip_proto, p.stream, p.source, p.dest
        );
        match Packet::parse(&line, stats.frames as usize) {
            Ok(packet) => {
                stats.summarised += 1;
                stats.lines += 1;
                if p.malformed {
                    stats.malformed += 1;
                } else if packet.desc == crate::dissect::UNKNOWN {
                    stats.unreadable += 1;
                }
                self.summary.packets.push(packet);
            }
            Err(_) => stats.ignored += 1,
        }
    }
}

/// Reads PDML and summarises its packets. XML that breaks off after some packets gives the
/// lines so far, with `stats.stopped_early` set.
pub fn summarize(input: impl BufRead) -> Result<Summary, PdmlError> {
    let mut reader = Reader::from_reader(input);
    let mut state = State::default();
    let mut buf = Vec::new();
    let mut root_seen = false;
    loop {
        let event = match reader.read_event_into(&mut buf) {
            Ok(ev) => ev,
            Err(e) => {
                let err = PdmlError::Xml {
                    position: reader.buffer_position(),
                    message: e.to_string(),
                };
                if state.summary.stats.frames == 0 {
                    return Err(err);
                }
                state.summary.stats.stopped_early = Some(err.to_string());
                break;
            }
        };
        let (start, empty) = match &event {
            Event::Start(e) => (Some(e), false),
            Event::Empty(e) => (Some(e), true),
            Event::End(_) => {
                state.close();
                (None, false)
            }
            Event::Eof => break,
            _ => (None, false),
        };
        if let Some(e) = start {
            if !root_seen {
                root_seen = true;
                if e.name().as_ref() != "pdml" {
                    return Err(PdmlError::NotPdml(e.name().as_ref().to_string()));
                }
            }
            let kind = match e.name().as_ref() {
                "packet" => Kind::Packet,
                "proto" => Kind::Proto,
                "field" => Kind::Field,
                _ => Kind::Other,
            };
            let el = attributes(e, kind).map_err(|err| PdmlError::Xml {
                position: reader.buffer_position(),
                message: err.to_string(),
            });
            match el {
                Ok(el) => {
                    state.open(el);
                    if empty {
                        state.close();
                    }
                }
                Err(err) => {
                    if state.summary.stats.frames == 0 {
                        return Err(err);
                    }
                    state.summary.stats.stopped_early = Some(err.to_string());
                    break;
                }
            }
        }
        buf.clear();
    }
    Ok(state.summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_dns_packet() {
        let pdml = r#"<?xml version="1.0"?>
<pdml version="0">
<packet>
  <proto name="geninfo"><field name="timestamp" value="1.5"/></proto>
  <proto name="ip">
    <field name="ip.proto" show="17" value="11"/>
    <field name="ip.src" show="10.0.0.1"/>
    <field name="ip.dst" show="10.0.0.2"/>
  </proto>
  <proto name="udp"><field name="udp.stream" show="4"/></proto>
  <proto name="dns"><field name="dns.flags.response" showname="Response: Message is a response" show="1"/></proto>
</packet>
<packet>
  <proto name="ip"><field name="ip.src" show="10.0.0.3"/><field name="ip.dst" show="10.0.0.1"/></proto>
  <proto name="arp"/>
</packet>
</pdml>"#;
        let s = summarize(pdml.as_bytes()).unwrap();
        assert_eq!(s.packets.len(), 1);
        assert_eq!(
            s.packets[0].to_string(),
            "1.500000000\t11\t4\t1\t2\tdns\t1\tresponse"
        );
        assert_eq!(s.stats.frames, 2);
        assert_eq!(s.stats.ignored, 1);
        assert!(summarize("<html/>".as_bytes()).is_err());
    }
}
