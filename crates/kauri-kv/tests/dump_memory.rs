//! A dump's length fields cannot make a load allocate memory the dump does not hold: a
//! 60-byte dump claiming a 2 GiB value is refused as truncated without a large
//! allocation. Alone in its test binary, because it watches every allocation of the
//! process.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use kauri_kv::dump::load_dump;
use kauri_kv::mem::MemBackend;

/// The system allocator, remembering the largest single request.
struct Largest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Largest = Largest;

fn varint(mut n: u64, out: &mut Vec<u8>) {
    loop {
        let low = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

#[test]
fn a_value_length_allocates_only_what_is_read() {
    const TABLES: &[&str] = &["meta", "entries"];
    let mut dump = b"KAURIDMP".to_vec();
    dump.extend_from_slice(&1u32.to_be_bytes());
    dump.extend_from_slice(&(TABLES.len() as u16).to_be_bytes());
    for t in TABLES {
        dump.push(t.len() as u8);
        dump.extend_from_slice(t.as_bytes());
    }
    varint(1, &mut dump);
    dump.push(b'a');
    varint(1 << 31, &mut dump);
    dump.extend_from_slice(b"xyz");

    let store = MemBackend::new(TABLES);
    LARGEST.store(0, Ordering::Relaxed);
    let err = load_dump(&store, TABLES, dump.as_slice(), None).unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(
        largest <= 4 << 20,
        "a 2 GiB claim allocated {largest} bytes at once"
    );
}
