//! SPNEGO (RFC 4178, MS-SPNG) on the accepting side, as LDAP's GSS-SPNEGO SASL mechanism
//! carries it: the client's NegTokenInit (in a GSS InitialContextToken) and NegTokenResp
//! tokens are read, NTLMSSP is the mechanism chosen (Kerberos, once a KDC exists, is the
//! other), and the mechListMIC protects the mechanism list from a downgrade. Clients that
//! send raw NTLMSSP under GSS-SPNEGO, as Windows accepts, get raw NTLMSSP back.

use crate::der;
use crate::error::AuthError;
use crate::ntlm::{
    Authenticate, NtlmClient, NtlmServer, NtlmSession, NtlmSettings, ServerNames, SIGNATURE,
};

/// The SPNEGO mechanism, 1.3.6.1.5.5.2 (DER contents).
pub const OID_SPNEGO: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x02];
/// NTLMSSP, 1.3.6.1.4.1.311.2.2.10.
pub const OID_NTLMSSP: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a];

/// Kerberos V5, 1.2.840.113554.1.2.2 (DER contents).
pub const OID_KRB5: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02];
/// Microsoft's Kerberos OID, 1.2.840.48018.1.2.2, which Windows clients list first.
pub const OID_MS_KRB5: &[u8] = &[0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02];

const WHAT: &str = "SPNEGO token";

/// negState values.
const ACCEPT_COMPLETED: u8 = 0;
const ACCEPT_INCOMPLETE: u8 = 1;

/// A client token, parsed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct ClientToken {
    /// The mechanism OIDs (contents), most preferred first (NegTokenInit only).
    mech_types: Vec<Vec<u8>>,
    /// The DER of the mechanism list as sent, which the mechListMIC covers.
    mech_types_der: Option<Vec<u8>>,
    /// The mechanism token.
    token: Option<Vec<u8>>,
    /// The client's mechListMIC.
    mic: Option<Vec<u8>>,
}

/// The fields of a NegTokenInit (`init`: `[0]` is the mechanism list) or a NegTokenResp
/// (`[0]` is the negotiation state, not needed here).
fn parse_fields(body: &[u8], init: bool) -> Result<ClientToken, AuthError> {
    let seq = der::expect(body, 0x30, WHAT)?;
    let mut out = ClientToken::default();
    let mut rest = seq.body;
    while !rest.is_empty() {
        let f = der::read(rest, WHAT)?;
        rest = f.rest;
        match f.tag {
            0xa0 if init => {
                let list = der::expect(f.body, 0x30, WHAT)?;
                out.mech_types_der = Some(f.body[..f.body.len() - list.rest.len()].to_vec());
                let mut oids = list.body;
                while !oids.is_empty() {
                    let oid = der::expect(oids, 0x06, WHAT)?;
                    out.mech_types.push(oid.body.to_vec());
                    oids = oid.rest;
                }
            }
            0xa2 => out.token = Some(der::expect(f.body, 0x04, WHAT)?.body.to_vec()),
            0xa3 => out.mic = Some(der::expect(f.body, 0x04, WHAT)?.body.to_vec()),
            _ => {}
        }
    }
    Ok(out)
}

/// Reads a client token: an InitialContextToken holding a NegTokenInit, or a bare
/// NegTokenInit or NegTokenResp.
fn parse_client(token: &[u8]) -> Result<(bool, ClientToken), AuthError> {
    let outer = der::read(token, WHAT)?;
    match outer.tag {
        0x60 => {
            let oid = der::expect(outer.body, 0x06, WHAT)?;
            if oid.body != OID_SPNEGO {
                return Err(AuthError::Unsupported(
                    "the initial token is not for SPNEGO".into(),
                ));
            }
            let init = der::expect(oid.rest, 0xa0, WHAT)?;
            Ok((true, parse_fields(init.body, true)?))
        }
        0xa0 => Ok((true, parse_fields(outer.body, true)?)),
        0xa1 => Ok((false, parse_fields(outer.body, false)?)),
        t => Err(AuthError::malformed(
            WHAT,
            format!("unexpected tag {t:#04x}"),
        )),
    }
}

/// A NegTokenResp.
fn encode_resp(
    state: u8,
    mech: Option<&[u8]>,
    token: Option<&[u8]>,
    mic: Option<&[u8]>,
) -> Vec<u8> {
    let mut seq = Vec::new();
    seq.extend(der::element(0xa0, &der::element(0x0a, &[state])));
    if let Some(m) = mech {
        seq.extend(der::element(0xa1, &der::element(0x06, m)));
    }
    if let Some(t) = token {
        seq.extend(der::element(0xa2, &der::element(0x04, t)));
    }
    if let Some(m) = mic {
        seq.extend(der::element(0xa3, &der::element(0x04, m)));
    }
    der::element(0xa1, &der::element(0x30, &seq))
}

/// A client's first SPNEGO token when it carries Kerberos: the Kerberos token for the
/// mechanism it chose, with what its mechListMIC covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KerberosInit {
    /// The Kerberos OID the client listed (either form), echoed in the answer.
    pub mech: Vec<u8>,
    /// The Kerberos InitialContextToken (the AP-REQ).
    pub token: Vec<u8>,
    /// The DER of the mechanism list, which the mechListMIC covers.
    pub mech_list: Option<Vec<u8>>,
    /// The client's mechListMIC, if it sent one.
    pub mic: Option<Vec<u8>>,
    /// Whether Kerberos was the client's first choice (otherwise the MIC is required).
    pub first_choice: bool,
}

/// The Kerberos part of a client's first token, when it sends an optimistic Kerberos
/// token for its preferred mechanism; `None` for NTLMSSP (or anything else), which
/// [`SpnegoServer`] handles.
pub fn kerberos_init(token: &[u8]) -> Option<KerberosInit> {
    if token.starts_with(SIGNATURE) {
        return None;
    }
    let (true, t) = parse_client(token).ok()? else {
        return None;
    };
    let first = t.mech_types.first()?;
    if first != OID_KRB5 && first != OID_MS_KRB5 {
        return None;
    }
    Some(KerberosInit {
        mech: first.clone(),
        token: t.token?,
        mech_list: t.mech_types_der,
        mic: t.mic,
        first_choice: true,
    })
}

/// The final NegTokenResp of a Kerberos exchange: accepted, the mechanism, the AP-REP
/// (when mutual authentication was asked) and the server's mechListMIC.
pub fn kerberos_response(mech: &[u8], reply: Option<&[u8]>, mic: Option<&[u8]>) -> Vec<u8> {
    encode_resp(ACCEPT_COMPLETED, Some(mech), reply, mic)
}

/// What the server does next.
#[derive(Debug)]
pub enum Step {
    /// Send this token and wait for the client's next one (saslBindInProgress).
    Continue(Vec<u8>),
    /// The client has sent its credentials: find the account (or take the anonymous
    /// logon) and call [`SpnegoServer::accept`].
    Authenticate(Box<Authenticate>),
}

/// Where the exchange stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Start,
    /// NTLMSSP chosen, the client's NEGOTIATE still to come.
    MechChosen,
    /// CHALLENGE sent.
    Challenged,
    /// AUTHENTICATE received, waiting for the account.
    Authenticating,
    Done,
}

/// One GSS-SPNEGO exchange.
pub struct SpnegoServer {
    ntlm: NtlmServer,
    phase: Phase,
    /// Raw NTLMSSP, no SPNEGO framing.
    raw: bool,
    mech_types_der: Option<Vec<u8>>,
    ntlm_first: bool,
    client_mic: Option<Vec<u8>>,
}

impl SpnegoServer {
    /// A new exchange for a server with `names`.
    pub fn new(names: ServerNames, settings: NtlmSettings) -> Result<SpnegoServer, AuthError> {
        Ok(SpnegoServer {
            ntlm: NtlmServer::new(names, settings)?,
            phase: Phase::Start,
            raw: false,
            mech_types_der: None,
            ntlm_first: true,
            client_mic: None,
        })
    }

    /// Takes the client's next token.
    pub fn step(&mut self, token: &[u8]) -> Result<Step, AuthError> {
        if self.phase == Phase::Start && token.starts_with(SIGNATURE) {
            self.raw = true;
            self.phase = Phase::MechChosen;
        }
        if self.raw {
            return self.ntlm_step(token);
        }
        let (init, t) = parse_client(token)?;
        match (self.phase, init) {
            (Phase::Start, true) => {
                let Some(pos) = t.mech_types.iter().position(|m| m == OID_NTLMSSP) else {
                    return Err(AuthError::Unsupported(
                        "no mechanism in common: this server offers NTLMSSP".into(),
                    ));
                };
                self.mech_types_der = t.mech_types_der;
                self.ntlm_first = pos == 0;
                self.phase = Phase::MechChosen;
                match t.token {
                    // An optimistic token for the mechanism we choose.
                    Some(tok) if self.ntlm_first => self.ntlm_step(&tok),
                    // Otherwise ask for NTLMSSP.
                    _ => Ok(Step::Continue(encode_resp(
                        ACCEPT_INCOMPLETE,
                        Some(OID_NTLMSSP),
                        None,
                        None,
                    ))),
                }
            }
            (Phase::MechChosen | Phase::Challenged, false) => {
                self.client_mic = t.mic;
                let tok = t
                    .token
                    .ok_or_else(|| AuthError::malformed(WHAT, "no mechanism token"))?;
                self.ntlm_step(&tok)
            }
            _ => Err(AuthError::OutOfSequence("SPNEGO token")),
        }
    }

    fn ntlm_step(&mut self, token: &[u8]) -> Result<Step, AuthError> {
        match self.phase {
            Phase::MechChosen => {
                let challenge = self.ntlm.challenge(token)?;
                self.phase = Phase::Challenged;
                Ok(Step::Continue(if self.raw {
                    challenge
                } else {
                    encode_resp(ACCEPT_INCOMPLETE, Some(OID_NTLMSSP), Some(&challenge), None)
                }))
            }
            Phase::Challenged => {
                let auth = self.ntlm.parse_authenticate(token)?;
                self.phase = Phase::Authenticating;
                Ok(Step::Authenticate(Box::new(auth)))
            }
            _ => Err(AuthError::OutOfSequence("NTLM token")),
        }
    }

    /// Verifies the credentials against the account's NT hash (`None` for an anonymous
    /// logon) and returns the final token with the session.
    pub fn accept(
        &mut self,
        auth: &Authenticate,
        nt_hash: Option<&[u8; 16]>,
    ) -> Result<(Vec<u8>, Option<NtlmSession>), AuthError> {
        if self.phase != Phase::Authenticating {
            return Err(AuthError::OutOfSequence("account"));
        }
        self.phase = Phase::Done;
        let Some(hash) = nt_hash else {
            if !auth.is_anonymous() {
                return Err(AuthError::LogonFailure("no such account".into()));
            }
            let token = if self.raw {
                Vec::new()
            } else {
                encode_resp(ACCEPT_COMPLETED, None, None, None)
            };
            return Ok((token, None));
        };
        let mut session = self.ntlm.verify(auth, hash)?.session;
        if self.raw {
            return Ok((Vec::new(), Some(session)));
        }
        // The mechanism list MIC: checked when sent, required when NTLMSSP was not the
        // client's first choice (RFC 4178 4.2.2), answered whenever the client sent one.
        let mic = match (&self.client_mic, &self.mech_types_der) {
            (Some(client), Some(list)) => {
                session.verify(list, client)?;
                let mic = session.sign(list).to_vec();
                session.restart_streams();
                Some(mic)
            }
            (None, Some(_)) if !self.ntlm_first => {
                return Err(AuthError::LogonFailure(
                    "the mechanism list MIC is missing".into(),
                ))
            }
            _ => None,
        };
        let token = encode_resp(ACCEPT_COMPLETED, None, None, mic.as_deref());
        Ok((token, Some(session)))
    }
}

/// The client's side of a GSS-SPNEGO exchange carrying NTLMSSP (Kauri's own tools bind
/// with it).
pub struct SpnegoClient {
    ntlm: NtlmClient,
    mech_list: Vec<u8>,
    session: Option<NtlmSession>,
}

impl SpnegoClient {
    /// An exchange for `domain\user`; `seal` asks for confidentiality, else signing.
    pub fn new(user: &str, domain: &str, password: &str, seal: bool) -> SpnegoClient {
        SpnegoClient {
            ntlm: NtlmClient::new(user, domain, password, seal),
            mech_list: der::element(0x30, &der::element(0x06, OID_NTLMSSP)),
            session: None,
        }
    }

    /// The first token: NTLMSSP offered, with its NEGOTIATE.
    pub fn initial(&mut self) -> Vec<u8> {
        let mut init = der::element(0xa0, &self.mech_list);
        init.extend(der::element(
            0xa2,
            &der::element(0x04, &self.ntlm.negotiate()),
        ));
        let mut body = der::element(0x06, OID_SPNEGO);
        body.extend(der::element(0xa0, &der::element(0x30, &init)));
        der::element(0x60, &body)
    }

    /// Takes the server's token: the next token to send, or `None` when the exchange is
    /// complete (the server's mechanism list MIC checked).
    pub fn step(&mut self, token: &[u8]) -> Result<Option<Vec<u8>>, AuthError> {
        let (_, t) = parse_client(token)?;
        match self.session.as_mut() {
            None => {
                let challenge = t
                    .token
                    .ok_or_else(|| AuthError::malformed(WHAT, "no CHALLENGE"))?;
                let (auth, mut session) = self.ntlm.authenticate(&challenge)?;
                let mic = session.sign(&self.mech_list);
                self.session = Some(session);
                let mut seq = der::element(0xa2, &der::element(0x04, &auth));
                seq.extend(der::element(0xa3, &der::element(0x04, &mic)));
                Ok(Some(der::element(0xa1, &der::element(0x30, &seq))))
            }
            Some(session) => {
                let mic = t
                    .mic
                    .ok_or_else(|| AuthError::malformed(WHAT, "no mechanism list MIC"))?;
                session.verify(&self.mech_list, &mic)?;
                session.restart_streams();
                Ok(None)
            }
        }
    }

    /// The established session.
    pub fn into_session(self) -> Option<NtlmSession> {
        self.session
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_and_server_complete_an_exchange() {
        use crate::crypto::nt_hash;
        use crate::layer::SecurityLayer;
        let names = ServerNames {
            netbios_domain: "SAMDOM".into(),
            netbios_computer: "DC1".into(),
            dns_domain: "samdom.example.com".into(),
            dns_computer: "dc1.samdom.example.com".into(),
            dns_tree: "samdom.example.com".into(),
        };
        let mut client = SpnegoClient::new("bob", "SAMDOM", "B0b.pass", true);
        let mut server = SpnegoServer::new(names, NtlmSettings::default()).unwrap();
        let Step::Continue(challenge) = server.step(&client.initial()).unwrap() else {
            panic!("no challenge");
        };
        let auth = client.step(&challenge).unwrap().unwrap();
        let Step::Authenticate(a) = server.step(&auth).unwrap() else {
            panic!("no credentials");
        };
        let (last, session) = server.accept(&a, Some(&nt_hash("B0b.pass"))).unwrap();
        assert!(client.step(&last).unwrap().is_none());
        let mut s = session.unwrap();
        let mut c = client.into_session().unwrap();
        assert_eq!(
            s.unwrap(&c.wrap(b"first request")).unwrap(),
            b"first request"
        );
        assert_eq!(c.unwrap(&s.wrap(b"first answer")).unwrap(), b"first answer");
    }

    #[test]
    fn tokens_parse_and_garbage_is_refused() {
        // An InitialContextToken offering NTLMSSP with no mechanism token.
        let list = der::element(0x30, &der::element(0x06, OID_NTLMSSP));
        let init = der::element(0xa0, &der::element(0x30, &der::element(0xa0, &list)));
        let mut body = der::element(0x06, OID_SPNEGO);
        body.extend(init);
        let token = der::element(0x60, &body);
        let (is_init, t) = parse_client(&token).unwrap();
        assert!(is_init);
        assert_eq!(t.mech_types, vec![OID_NTLMSSP.to_vec()]);
        assert_eq!(t.mech_types_der, Some(list));
        for bad in [
            &[][..],
            &[0x60],
            &[0x60, 0x05, 0x06],
            &[0xa1, 0x80],
            &[0x30, 0x00],
        ] {
            assert!(parse_client(bad).is_err(), "{bad:?}");
        }
    }
}
