//! AD's extended DN forms in requests: `<GUID=…>`, `<SID=…>` and `<WKGUID=guid,DN>` name
//! an object by its objectGUID, its objectSid, or a well-known container of a naming
//! context (its `wellKnownObjects`), wherever a DN is expected — base DNs, target DNs, and
//! DN values in filters and changes. AD tools (samba-tool among them) rely on them: the
//! Users container is `<WKGUID=a9d1ca15768811d1aded00c04fd8d5cd,DC=…>`, group members are
//! matched as `(memberOf=<SID=S-1-5-21-…>)`.

use kauri_db::syntax::parse_sid_text;
use kauri_db::{DbRead, Dn, Filter, Syntax};
use kauri_kv::lmdb::LmdbBackend;

use crate::ctx::Ctx;

/// Whether a DN text uses an extended form.
pub fn is_extended(text: &str) -> bool {
    text.trim_start().starts_with('<')
}

fn hex_bytes(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The DN an extended form names, as this snapshot sees it (`None` when nothing matches or
/// the form is not understood). A plain DN after the extended parts (`<GUID=…>;CN=…`, as
/// the extended-DN control writes them) is used when it resolves.
pub fn resolve(snap: &DbRead<'_, LmdbBackend>, text: &str) -> Option<String> {
    let mut parts = text.split(';').map(str::trim).peekable();
    let mut by_id: Option<u64> = None;
    while let Some(part) = parts.peek().copied() {
        let Some(inner) = part.strip_prefix('<').and_then(|p| p.strip_suffix('>')) else {
            break;
        };
        parts.next();
        let (kind, value) = inner.split_once('=')?;
        let found = match kind.to_ascii_uppercase().as_str() {
            "GUID" => {
                let bytes = hex_bytes(value).or_else(|| {
                    Syntax::Guid
                        .normalize(value.as_bytes())
                        .ok()
                        .map(|c| c.into_owned())
                })?;
                snap.find_eq("objectGUID", &bytes).ok()??.into_iter().next()
            }
            "SID" => {
                let bytes = parse_sid_text(value.as_bytes())
                    .ok()
                    .or_else(|| hex_bytes(value))?;
                snap.find_eq("objectSid", &bytes).ok()??.into_iter().next()
            }
            "WKGUID" => {
                let (guid, nc) = value.split_once(',')?;
                return well_known(snap, guid, nc);
            }
            _ => return None,
        };
        by_id = by_id.or(found);
    }
    let rest: Vec<&str> = parts.collect();
    if !rest.is_empty() {
        let plain = rest.join(";");
        if let Ok(dn) = Dn::parse(&plain) {
            if matches!(snap.lookup(&dn), Ok(Some(_))) {
                return Some(plain);
            }
        }
    }
    by_id.and_then(|id| snap.dn_string(id).ok())
}

/// The object a naming context lists in `wellKnownObjects` under `guid`
/// (`B:32:<guid hex>:<DN>`).
fn well_known(snap: &DbRead<'_, LmdbBackend>, guid: &str, nc: &str) -> Option<String> {
    let id = snap.lookup(&Dn::parse(nc).ok()?).ok()??;
    let attr = snap.attr_id("wellKnownObjects")?;
    let rec = snap.record(id).ok()??;
    let a = rec.attr(attr)?;
    let prefix = format!("B:32:{}:", guid.to_ascii_uppercase());
    a.values().find_map(|v| {
        let text = std::str::from_utf8(v.raw).ok()?;
        let upper = text.get(..prefix.len())?.to_ascii_uppercase();
        (upper == prefix).then(|| text.get(prefix.len()..).map(str::to_string))?
    })
}

/// A DN text with any extended form resolved (unchanged when plain or unresolvable, so
/// the caller's own error — noSuchObject or invalidDNSyntax — follows).
pub fn plain_dn(ctx: &Ctx, text: &str) -> String {
    if !is_extended(text) {
        return text.to_string();
    }
    ctx.db
        .read()
        .ok()
        .and_then(|snap| resolve(&snap, text))
        .unwrap_or_else(|| text.to_string())
}

/// DN values given in extended form, resolved (values of other syntaxes untouched).
pub fn plain_values(ctx: &Ctx, attr: &str, values: &mut [Vec<u8>]) {
    if !values.iter().any(|v| v.first() == Some(&b'<')) {
        return;
    }
    if ctx.db.config().schema.syntax_of(attr) != Syntax::Dn {
        return;
    }
    let Ok(snap) = ctx.db.read() else {
        return;
    };
    for v in values.iter_mut() {
        if let Some(dn) = std::str::from_utf8(v)
            .ok()
            .filter(|t| is_extended(t))
            .and_then(|t| resolve(&snap, t))
        {
            *v = dn.into_bytes();
        }
    }
}

/// A filter whose DN-valued equality assertions in extended form are resolved.
pub fn plain_filter(ctx: &Ctx, f: &Filter) -> Filter {
    match f {
        Filter::And(v) => Filter::And(v.iter().map(|x| plain_filter(ctx, x)).collect()),
        Filter::Or(v) => Filter::Or(v.iter().map(|x| plain_filter(ctx, x)).collect()),
        Filter::Not(x) => Filter::Not(Box::new(plain_filter(ctx, x))),
        Filter::Equality(a, v) if v.first() == Some(&b'<') => {
            let mut values = vec![v.clone()];
            plain_values(ctx, a, &mut values);
            Filter::Equality(a.clone(), values.pop().unwrap_or_default())
        }
        Filter::Extensible(m) if m.value.first() == Some(&b'<') && m.attr.is_some() => {
            let mut m = m.clone();
            let mut values = vec![m.value.clone()];
            plain_values(ctx, m.attr.as_deref().unwrap_or_default(), &mut values);
            m.value = values.pop().unwrap_or_default();
            Filter::Extensible(m)
        }
        other => other.clone(),
    }
}
