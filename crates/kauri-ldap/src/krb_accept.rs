//! Accepting a Kerberos AP-REQ made out to this DC, for every service that takes one
//! (LDAP's GSSAPI and GSS-SPNEGO binds, GSS-TSIG for DNS updates): the ticket must be for
//! the DC's own account, and the caller's identity and token come from its PAC, with the
//! built-in groups this DC adds for its own resources.

use kauri_auth::krb::acceptor::{accept, Accepted};
use kauri_auth::krb::crypto::Key;
use kauri_auth::krb::msg::Ticket;
use kauri_auth::krb::pac::sid_to_string;
use kauri_auth::AuthError;
use kauri_domain::directory::kerberos_keys::key_for;
use kauri_domain::directory::view::View;
use kauri_domain::directory::Account;
use kauri_domain::sid::Sid;

use crate::ctx::Ctx;

/// Accepts a client's Kerberos initial token (a GSS-API krb5 token carrying an AP-REQ)
/// for a ticket to one of this DC's names, and names the account behind it.
pub fn accept_for_dc(ctx: &Ctx, token: &[u8]) -> Result<(Accepted, Account), AuthError> {
    let dir = &ctx.dir;
    let Some(domain) = dir.domain() else {
        return Err(AuthError::Unsupported("Kerberos needs a domain".into()));
    };
    let now = i64::try_from(kauri_domain::directory::now_secs()).unwrap_or(i64::MAX);
    let skew = i64::from(ctx.cfg().kerberos_max_clock_skew_minutes) * 60;
    let service_key = |t: &Ticket| -> Result<Key, AuthError> {
        let r = dir
            .db()
            .read()
            .map_err(|e| AuthError::Unsupported(e.to_string()))?;
        let wrong = || AuthError::LogonFailure("the ticket is not for this server".into());
        let id = dir
            .kdc_find_service(&r, &t.sname.components)
            .map_err(|e| AuthError::Unsupported(e.to_string()))?
            .ok_or_else(wrong)?;
        let ours = match &domain.dc_computer {
            Some(dn) => View::id_of(&r, dn).ok().flatten() == Some(id),
            None => false,
        };
        if !ours {
            return Err(wrong());
        }
        let acct = dir
            .kdc_account(&r, id)
            .map_err(|e| AuthError::Unsupported(e.to_string()))?
            .ok_or_else(wrong)?;
        key_for(&acct, t.enc_part.etype, t.enc_part.kvno)
            .map(|k| k.key)
            .map_err(|_| AuthError::LogonFailure("no key of the ticket's version".into()))
    };
    let accepted = accept(token, &service_key, now, skew, &ctx.replay)?;
    let account = pac_account(ctx, &accepted)?;
    Ok((accepted, account))
}

/// SPNEGO's mechanism-list MIC with Kerberos (RFC 4178 §5): the client's, when it sent
/// one, is verified and answered with the server's own (`None`: nothing to send); a
/// client whose first choice was not Kerberos must send one.
pub fn mech_list_mic(
    accepted: &mut Accepted,
    mech_list: Option<&[u8]>,
    mic: Option<&[u8]>,
    first_choice: bool,
) -> Result<Option<Vec<u8>>, AuthError> {
    match (mic, mech_list) {
        (Some(m), Some(list)) => {
            accepted.context.verify_mic(list, m)?;
            Ok(Some(accepted.context.get_mic(list)?))
        }
        (None, Some(_)) if !first_choice => Err(AuthError::LogonFailure(
            "the mechanism list MIC is missing".into(),
        )),
        _ => Ok(None),
    }
}

/// The account and token a ticket's PAC names.
pub fn pac_account(ctx: &Ctx, accepted: &Accepted) -> Result<Account, AuthError> {
    let no = |why: &str| AuthError::LogonFailure(why.to_string());
    let pac = accepted
        .pac
        .as_ref()
        .ok_or_else(|| no("the ticket has no PAC"))?;
    let info = pac
        .logon_info()
        .ok()
        .flatten()
        .ok_or_else(|| no("the PAC has no logon information"))?;
    let domain_sid = info
        .logon_domain_id
        .as_deref()
        .and_then(|s| Sid::from_bytes(s).ok())
        .ok_or_else(|| no("the PAC names no domain"))?;
    let user_sid = domain_sid.with_rid(info.user_id);
    let mut groups: Vec<Sid> = std::iter::once(info.primary_group_id)
        .chain(info.group_ids.iter().map(|g| g.relative_id))
        .map(|r| domain_sid.with_rid(r))
        .collect();
    groups.extend(
        info.extra_sids
            .iter()
            .filter_map(|s| Sid::from_bytes(&s.sid).ok()),
    );
    let dir = &ctx.dir;
    let unavailable = |e: &dyn std::fmt::Display| AuthError::Unsupported(e.to_string());
    let r = dir.db().read().map_err(|e| unavailable(&e))?;
    let id = r
        .find_eq("objectSid", &user_sid.to_bytes())
        .map_err(|e| unavailable(&e))?
        .and_then(|ids| ids.first().copied())
        .ok_or_else(|| no("the PAC's account is not in this directory"))?;
    // A tombstone keeps its SID; a deleted account binds no more.
    let deleted = View::text(&r, id, "isDeleted")
        .ok()
        .flatten()
        .is_some_and(|v| v.eq_ignore_ascii_case("TRUE"));
    if deleted {
        return Err(no("the PAC's account has been deleted"));
    }
    let dn = View::dn_of(&r, id).map_err(|e| unavailable(&e))?;
    // Built-in groups are this DC's own (a resource domain's local groups): they come
    // from the directory, not the PAC.
    if let Some(d) = dir.domain() {
        if let Ok(token) = kauri_domain::directory::token_groups(&r, &d, id) {
            groups.extend(
                token
                    .into_iter()
                    .map(|(_, s)| s)
                    .filter(|s| s.to_string().starts_with("S-1-5-32-")),
            );
        }
    }
    groups.sort();
    groups.dedup();
    let admin = kauri_domain::directory::is_admin_token(&groups, &domain_sid);
    tracing::debug!(
        sid = %sid_to_string(&user_sid.to_bytes()).unwrap_or_default(),
        "Kerberos logon"
    );
    Ok(Account {
        id,
        dn,
        sid: Some(user_sid),
        groups,
        admin,
    })
}
