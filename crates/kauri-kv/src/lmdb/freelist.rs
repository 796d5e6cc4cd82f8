//! LMDB's free pages: the pages its freelist (the internal database `FREE_DBI`) lists for
//! reuse, summed as `mdb_stat -f` sums them.
//!
//! heed opens no handle on that database, so it is read from the data file itself, with
//! positional reads (no unsafe code, no second LMDB environment), in LMDB's on-disk format
//! (data version 1): the newest meta page names the freelist's root, whose leaves hold one
//! record per freeing transaction, each a list of page numbers that starts with its length.
//!
//! Why what is read is one consistent tree: the caller holds a read transaction with id N
//! while this runs. LMDB reuses only pages freed by transactions older than its oldest
//! reader, so no page reachable from snapshot N or from any later one is written while that
//! reader lives, and a commit writes its pages before its meta page. A meta page of a
//! transaction ≥ N therefore names a tree that stays as it is during the walk. Every page
//! read is checked (its number, its kind, its bounds); a check that fails (a meta page read
//! while a commit rewrote it) is reported, and the caller tries again.

use std::fs::File;

/// Bytes of a page header (`MDB_page` up to `mp_ptrs`).
const PAGE_HEADER: usize = 16;
/// Bytes of a node header (`MDB_node` up to `mn_data`).
const NODE_HEADER: usize = 8;
/// `MDB_MAGIC`.
const MAGIC: u32 = 0xBEEF_C0DE;
/// `MDB_DATA_VERSION` of a release build of LMDB.
const DATA_VERSION: u32 = 1;
/// Offsets in a meta page: the meta follows the page header; `mm_dbs[FREE_DBI].md_root`,
/// `mm_last_pg` and `mm_txnid` (64-bit build: 4 + 4 + 8 + 8 bytes before `mm_dbs`, each
/// `MDB_db` 48 bytes with its root last).
const META_FREE_ROOT: usize = PAGE_HEADER + 24 + 40;
const META_LAST_PAGE: usize = PAGE_HEADER + 24 + 2 * 48;
const META_TXNID: usize = META_LAST_PAGE + 8;
/// Page flags.
const P_BRANCH: u16 = 0x01;
const P_LEAF: u16 = 0x02;
const P_OVERFLOW: u16 = 0x04;
const P_LEAF2: u16 = 0x20;
/// A leaf node whose data lives on overflow pages.
const F_BIGDATA: u16 = 0x01;
/// The root of an empty tree.
const P_INVALID: u64 = u64::MAX;
/// The two meta pages at the start of the file.
const NUM_METAS: u64 = 2;

/// What the freelist holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct FreeList {
    /// Pages listed as free.
    pub listed: u64,
    /// Pages the freelist's own tree occupies (branch, leaf and overflow pages).
    pub tree: u64,
    /// The last page number in use, from the same meta page.
    pub last_page: u64,
}

fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buf, offset)
    }
    #[cfg(not(unix))]
    {
        let _ = (file, buf, offset);
        Err(std::io::Error::other("not supported on this platform"))
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// A meta page: its transaction, the freelist's root and the last page in use.
struct Meta {
    txnid: u64,
    free_root: u64,
    last_page: u64,
}

fn read_meta(file: &File, page_size: usize, which: u64) -> Result<Option<Meta>, String> {
    let mut b = [0u8; META_TXNID + 8];
    read_exact_at(file, &mut b, which * page_size as u64)
        .map_err(|e| format!("reading meta page {which}: {e}"))?;
    let field = |at| u64_at(&b, at).ok_or("short meta page");
    if u32_at(&b, PAGE_HEADER) != Some(MAGIC) || u32_at(&b, PAGE_HEADER + 4) != Some(DATA_VERSION) {
        return Ok(None);
    }
    Ok(Some(Meta {
        txnid: field(META_TXNID)?,
        free_root: field(META_FREE_ROOT)?,
        last_page: field(META_LAST_PAGE)?,
    }))
}

/// Counts the freelist of the store in `file` (pages of `page_size` bytes, the file
/// `file_len` bytes long) as of the newest commit, which must be `min_txnid` (the id of
/// the read transaction the caller holds) or later.
pub(crate) fn count(
    file: &File,
    page_size: usize,
    file_len: u64,
    min_txnid: u64,
) -> Result<FreeList, String> {
    if !cfg!(target_pointer_width = "64") {
        return Err("free pages are read on 64-bit builds only".into());
    }
    if page_size < 512 {
        return Err(format!("unexpected page size {page_size}"));
    }
    let meta = [
        read_meta(file, page_size, 0)?,
        read_meta(file, page_size, 1)?,
    ]
    .into_iter()
    .flatten()
    .max_by_key(|m| m.txnid)
    .ok_or("no valid meta page")?;
    if meta.txnid < min_txnid {
        return Err(format!(
            "the newest meta page ({}) is older than the snapshot ({min_txnid})",
            meta.txnid
        ));
    }
    let mut out = FreeList {
        last_page: meta.last_page,
        ..FreeList::default()
    };
    if meta.free_root == P_INVALID {
        return Ok(out);
    }
    // Pages a tree may use: past the metas, within the last page in use and the file.
    let limit = meta
        .last_page
        .saturating_add(1)
        .min(file_len / page_size as u64);
    let check = |pgno: u64, pages: u64| {
        if pgno >= NUM_METAS && pgno.saturating_add(pages) <= limit {
            Ok(())
        } else {
            Err(format!("page {pgno} (+{pages}) is outside the file"))
        }
    };
    let mut page = vec![0u8; page_size];
    let mut stack = vec![meta.free_root];
    while let Some(pgno) = stack.pop() {
        check(pgno, 1)?;
        // A tree never has more pages than the file: more means a cycle.
        out.tree += 1;
        if out.tree > limit {
            return Err("the freelist tree loops".into());
        }
        read_exact_at(file, &mut page, pgno * page_size as u64)
            .map_err(|e| format!("reading page {pgno}: {e}"))?;
        let bad = |what: &str| format!("page {pgno}: {what}");
        if u64_at(&page, 0) != Some(pgno) {
            return Err(bad("not the page its parent names"));
        }
        let flags = u16_at(&page, 10).ok_or_else(|| bad("short"))?;
        let lower = usize::from(u16_at(&page, 12).ok_or_else(|| bad("short"))?);
        let upper = usize::from(u16_at(&page, 14).ok_or_else(|| bad("short"))?);
        if lower < PAGE_HEADER || lower > upper || upper > page_size {
            return Err(bad("bad free-space bounds"));
        }
        let branch = flags & P_BRANCH != 0;
        if !branch && (flags & P_LEAF == 0 || flags & P_LEAF2 != 0) {
            return Err(bad("neither a branch nor a leaf"));
        }
        for i in 0..(lower - PAGE_HEADER) / 2 {
            let at = usize::from(u16_at(&page, PAGE_HEADER + 2 * i).ok_or_else(|| bad("short"))?);
            if at < upper || at + NODE_HEADER > page_size {
                return Err(bad("node outside the page"));
            }
            let (first, second) = (
                u16_at(&page, at).ok_or_else(|| bad("short"))?,
                u16_at(&page, at + 2).ok_or_else(|| bad("short"))?,
            );
            // `mn_lo` comes first on little-endian hosts, `mn_hi` on big-endian ones.
            let (lo, hi) = if cfg!(target_endian = "little") {
                (first, second)
            } else {
                (second, first)
            };
            let node_flags = u16_at(&page, at + 4).ok_or_else(|| bad("short"))?;
            if branch {
                // A branch node's child: lo, hi and (64-bit) the flags word as the top.
                stack.push(u64::from(lo) | u64::from(hi) << 16 | u64::from(node_flags) << 32);
                continue;
            }
            let key_size = usize::from(u16_at(&page, at + 6).ok_or_else(|| bad("short"))?);
            let data_at = at + NODE_HEADER + key_size;
            let listed = if node_flags & F_BIGDATA != 0 {
                let first = u64_at(&page, data_at).ok_or_else(|| bad("node outside the page"))?;
                let mut head = [0u8; PAGE_HEADER + 8];
                check(first, 1)?;
                read_exact_at(file, &mut head, first * page_size as u64)
                    .map_err(|e| format!("reading page {first}: {e}"))?;
                let pages = u32_at(&head, 12).map_or(0, u64::from);
                let flags = u16_at(&head, 10).unwrap_or(0);
                if u64_at(&head, 0) != Some(first) || flags & P_OVERFLOW == 0 || pages == 0 {
                    return Err(format!("page {first}: not the overflow page named"));
                }
                check(first, pages)?;
                out.tree += pages;
                u64_at(&head, PAGE_HEADER).ok_or("short overflow page")?
            } else {
                let size = usize::from(lo) | usize::from(hi) << 16;
                if size < 8 {
                    return Err(bad("freelist record too short"));
                }
                u64_at(&page, data_at).ok_or_else(|| bad("node outside the page"))?
            };
            out.listed = out.listed.saturating_add(listed);
        }
    }
    if out.listed.saturating_add(out.tree) > meta.last_page.saturating_add(1) {
        return Err("more free pages than pages".into());
    }
    Ok(out)
}
