//! Admission: which connections a service takes, and which one goes when it is full.
//!
//! Every accepted connection asks for a [`Slot`] before anything else is done for it. A
//! slot is refused when the client's address already holds its share; when the service is
//! full (or unauthenticated connections hold all they may), the unauthenticated connection
//! that has been idle longest is closed to make room, and only when there is none is the
//! newcomer refused. Authenticated connections are never closed to make room, and a reserve
//! of slots is theirs alone, so a flood of connections that never authenticate cannot lock
//! out the clients that do.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::counters::{Close, NetCounters};

/// The limits one service's connections live under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Connections held at once.
    pub max_connections: usize,
    /// Of those, how many only authenticated connections may hold.
    pub reserved_for_authenticated: usize,
    /// Connections from one address at once (an IPv6 client counts by its /64); 0 for no
    /// limit.
    pub max_per_address: usize,
    /// Unauthenticated connections from one address at once; 0 for no limit.
    pub max_unauthenticated_per_address: usize,
}

impl Limits {
    /// How many unauthenticated connections may be held at once: the whole limit less the
    /// reserve, the reserve taking at most half (a small `max_connections` with the default
    /// reserve must not leave newcomers a single place to fight over).
    pub fn max_unauthenticated(&self) -> usize {
        let max = self.max_connections.max(1);
        let reserve = self.reserved_for_authenticated.min(max / 2);
        max.saturating_sub(reserve).max(1)
    }
}

/// Why a connection was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Every slot is in use and no unauthenticated idle connection may be closed for it.
    Full,
    /// The client's address holds its limit of connections.
    Address,
    /// The client's address holds its limit of unauthenticated connections.
    UnauthenticatedAddress,
}

impl Refusal {
    /// Every refusal.
    pub const ALL: [Refusal; 3] = [
        Refusal::Full,
        Refusal::Address,
        Refusal::UnauthenticatedAddress,
    ];

    /// A short name, for logs and metric labels.
    pub fn name(self) -> &'static str {
        match self {
            Refusal::Full => "full",
            Refusal::Address => "address",
            Refusal::UnauthenticatedAddress => "unauthenticated_address",
        }
    }

    /// What to tell the client.
    pub fn text(self) -> &'static str {
        match self {
            Refusal::Full => "the server is serving all the connections it can",
            Refusal::Address => "too many connections from this address",
            Refusal::UnauthenticatedAddress => {
                "too many unauthenticated connections from this address"
            }
        }
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Refusal::Full => 0,
            Refusal::Address => 1,
            Refusal::UnauthenticatedAddress => 2,
        }
    }
}

/// The address a client is counted under: IPv4 addresses as they are (IPv4-mapped IPv6
/// too), IPv6 addresses by their /64 prefix, the smallest network a site is given.
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                let [a, b, c, d, ..] = s;
                IpAddr::V6(Ipv6Addr::new(a, b, c, d, 0, 0, 0, 0))
            }
        },
    }
}

/// A connection with nothing in progress: it may be closed to make room.
const IDLE: u8 = 0;
/// A connection serving a request: it stays.
const BUSY: u8 = 1;
/// A connection closed to make room: it ends without serving anything more.
const EVICTED: u8 = 2;

struct SlotState {
    id: u64,
    addr: Option<IpAddr>,
    /// Changed under the table lock only, so the counts stay exact.
    authenticated: AtomicBool,
    /// [`IDLE`], [`BUSY`] or [`EVICTED`], changed by compare-and-swap only, so a connection
    /// that starts a request and the newcomer that would evict it never both win.
    state: AtomicU8,
    last_active_ms: AtomicU64,
    evict: CancellationToken,
}

impl SlotState {
    /// Closes the connection to make room, unless it is busy (or already closed).
    fn try_evict(&self) -> bool {
        let evicted = self
            .state
            .compare_exchange(IDLE, EVICTED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if evicted {
            self.evict.cancel();
        }
        evicted
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct AddrCount {
    total: usize,
    unauthenticated: usize,
}

#[derive(Default)]
struct Table {
    slots: HashMap<u64, Arc<SlotState>>,
    addrs: HashMap<IpAddr, AddrCount>,
    unauthenticated: usize,
    next_id: u64,
}

impl Table {
    /// Takes a slot out of the counts; false when it was already out (closed to make room).
    fn remove(&mut self, id: u64) -> bool {
        let Some(slot) = self.slots.remove(&id) else {
            return false;
        };
        let unauthenticated = !slot.authenticated.load(Ordering::Relaxed);
        if unauthenticated {
            self.unauthenticated = self.unauthenticated.saturating_sub(1);
        }
        if let Some(addr) = slot.addr {
            if let Some(c) = self.addrs.get_mut(&addr) {
                c.total = c.total.saturating_sub(1);
                if unauthenticated {
                    c.unauthenticated = c.unauthenticated.saturating_sub(1);
                }
                if c.total == 0 {
                    self.addrs.remove(&addr);
                }
            }
        }
        true
    }

    /// Closes the unauthenticated connection with nothing in progress that was active
    /// least recently (from `addr` only, when given) and takes it out of the counts;
    /// false when there is none.
    fn evict_oldest_idle(&mut self, addr: Option<IpAddr>) -> bool {
        // A candidate may start a request between the look and the eviction: it is busy
        // then, and the next look passes it over.
        loop {
            let Some(oldest) = self
                .slots
                .values()
                .filter(|s| {
                    !s.authenticated.load(Ordering::Relaxed)
                        && s.state.load(Ordering::Acquire) == IDLE
                        && (addr.is_none() || s.addr == addr)
                })
                .min_by_key(|s| (s.last_active_ms.load(Ordering::Relaxed), s.id))
                .cloned()
            else {
                return false;
            };
            if oldest.try_evict() {
                self.remove(oldest.id);
                return true;
            }
        }
    }
}

/// The connection table of one service (every listener of the service shares it).
pub struct Admission {
    limits: Limits,
    table: Mutex<Table>,
    epoch: Instant,
    counters: NetCounters,
}

impl Admission {
    /// A service's table under these limits.
    pub fn new(limits: Limits) -> Arc<Admission> {
        Arc::new(Admission {
            limits,
            table: Mutex::new(Table::default()),
            epoch: Instant::now(),
            counters: NetCounters::default(),
        })
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// What happened to the service's connections.
    pub fn counters(&self) -> &NetCounters {
        &self.counters
    }

    /// Connections held now: (all, unauthenticated).
    pub fn open(&self) -> (usize, usize) {
        let t = self.table.lock();
        (t.slots.len(), t.unauthenticated)
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A slot for a new connection from `peer` (`None` for a local socket, which no
    /// address limit applies to), closing the longest-idle unauthenticated connection when
    /// that is what makes room.
    pub fn admit(self: &Arc<Self>, peer: Option<IpAddr>) -> Result<Slot, Refusal> {
        let addr = peer.map(address_key);
        let refuse = |r: Refusal| {
            self.counters.count_refused(r);
            Err(r)
        };
        let mut t = self.table.lock();
        if let Some(a) = addr {
            // An address at its limits makes room among its own idle unauthenticated
            // connections, as the whole table does below.
            let lim = &self.limits;
            loop {
                let c = t.addrs.get(&a).copied().unwrap_or_default();
                let over = (lim.max_per_address != 0 && c.total >= lim.max_per_address)
                    .then_some(Refusal::Address)
                    .or((lim.max_unauthenticated_per_address != 0
                        && c.unauthenticated >= lim.max_unauthenticated_per_address)
                        .then_some(Refusal::UnauthenticatedAddress));
                let Some(why) = over else { break };
                if !t.evict_oldest_idle(Some(a)) {
                    return refuse(why);
                }
                self.counters.count_close(Close::Evicted);
            }
        }
        let max = self.limits.max_connections.max(1);
        let max_unauthenticated = self.limits.max_unauthenticated();
        while t.slots.len() >= max || t.unauthenticated >= max_unauthenticated {
            if !t.evict_oldest_idle(None) {
                return refuse(Refusal::Full);
            }
            self.counters.count_close(Close::Evicted);
        }
        let id = t.next_id;
        t.next_id += 1;
        let state = Arc::new(SlotState {
            id,
            addr,
            authenticated: AtomicBool::new(false),
            state: AtomicU8::new(IDLE),
            last_active_ms: AtomicU64::new(self.now_ms()),
            evict: CancellationToken::new(),
        });
        t.slots.insert(id, state.clone());
        t.unauthenticated += 1;
        if let Some(a) = addr {
            let c = t.addrs.entry(a).or_default();
            c.total += 1;
            c.unauthenticated += 1;
        }
        drop(t);
        self.counters.count_accepted();
        Ok(Slot {
            state,
            admission: self.clone(),
        })
    }

    fn set_authenticated(&self, state: &SlotState, yes: bool) {
        let mut t = self.table.lock();
        if !t.slots.contains_key(&state.id) || state.authenticated.load(Ordering::Relaxed) == yes {
            return;
        }
        state.authenticated.store(yes, Ordering::Relaxed);
        let delta = |n: usize| if yes { n.saturating_sub(1) } else { n + 1 };
        t.unauthenticated = delta(t.unauthenticated);
        if let Some(c) = state.addr.and_then(|a| t.addrs.get_mut(&a)) {
            c.unauthenticated = delta(c.unauthenticated);
        }
    }
}

/// One connection's place in its service's table; dropping it frees the place.
pub struct Slot {
    state: Arc<SlotState>,
    admission: Arc<Admission>,
}

impl Slot {
    /// Records that the connection authenticated (or, after a new bind, no longer is):
    /// authenticated connections may use the reserve and are never closed to make room.
    pub fn set_authenticated(&self, yes: bool) {
        if self.is_authenticated() != yes {
            self.admission.set_authenticated(&self.state, yes);
        }
    }

    /// Whether the connection counts as authenticated.
    pub fn is_authenticated(&self) -> bool {
        self.state.authenticated.load(Ordering::Relaxed)
    }

    /// Marks the connection busy before it serves a request: a busy connection is never
    /// closed to make room. False when it was closed for a newcomer first; it must then
    /// serve nothing more.
    pub fn begin_work(&self) -> bool {
        match self
            .state
            .state
            .compare_exchange(IDLE, BUSY, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(s) => s == BUSY,
        }
    }

    /// Marks the connection idle again (nothing in progress): it may now give way.
    pub fn end_work(&self) {
        let _ = self
            .state
            .state
            .compare_exchange(BUSY, IDLE, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Records activity (a request read or a response written): the longest idle goes
    /// first.
    pub fn touch(&self) {
        self.state
            .last_active_ms
            .store(self.admission.now_ms(), Ordering::Relaxed);
    }

    /// Resolves when the connection was closed to make room for another; the connection
    /// should then say so to its client and end.
    pub fn evicted(&self) -> WaitForCancellationFuture<'_> {
        self.state.evict.cancelled()
    }

    /// Whether the connection was closed to make room.
    pub fn is_evicted(&self) -> bool {
        self.state.state.load(Ordering::Acquire) == EVICTED
    }

    /// Counts a connection closed by one of the connection rules.
    pub fn closed_by(&self, rule: Close) {
        self.admission.counters.count_close(rule);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.admission.table.lock().remove(self.state.id);
    }
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("id", &self.state.id)
            .field("addr", &self.state.addr)
            .field("authenticated", &self.is_authenticated())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, reserve: usize, per: usize, unauth_per: usize) -> Limits {
        Limits {
            max_connections: max,
            reserved_for_authenticated: reserve,
            max_per_address: per,
            max_unauthenticated_per_address: unauth_per,
        }
    }

    fn ip(s: &str) -> Option<IpAddr> {
        s.parse().ok()
    }

    #[test]
    fn oldest_idle_unauthenticated_goes_first() {
        let a = Admission::new(limits(3, 0, 0, 0));
        let first = a.admit(ip("10.0.0.1")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(3));
        let second = a.admit(ip("10.0.0.2")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(3));
        let third = a.admit(ip("10.0.0.3")).unwrap();
        first.touch();
        // Full: the longest idle (now the second) makes room.
        let fourth = a.admit(ip("10.0.0.4")).unwrap();
        assert!(second.is_evicted());
        assert!(!first.is_evicted() && !third.is_evicted());
        assert_eq!(a.open(), (3, 3));
        assert_eq!(a.counters().closed_count(Close::Evicted), 1);
        // Dropping an evicted slot does not free a second place.
        drop(second);
        assert_eq!(a.open(), (3, 3));
        drop(fourth);
        assert_eq!(a.open(), (2, 2));
    }

    #[test]
    fn busy_and_authenticated_connections_stay() {
        let a = Admission::new(limits(2, 0, 0, 0));
        let busy = a.admit(ip("10.0.0.1")).unwrap();
        assert!(busy.begin_work());
        let bound = a.admit(ip("10.0.0.2")).unwrap();
        bound.set_authenticated(true);
        assert_eq!(a.admit(ip("10.0.0.3")).unwrap_err(), Refusal::Full);
        assert_eq!(a.counters().refused_count(Refusal::Full), 1);
        busy.end_work();
        let _new = a.admit(ip("10.0.0.3")).unwrap();
        assert!(busy.is_evicted() && !bound.is_evicted());
        // An evicted connection cannot start work any more.
        assert!(!busy.begin_work());
    }

    #[test]
    fn the_reserve_is_for_authenticated_connections() {
        let a = Admission::new(limits(3, 1, 0, 0));
        let one = a.admit(ip("10.0.0.1")).unwrap();
        assert!(one.begin_work());
        let two = a.admit(ip("10.0.0.1")).unwrap();
        assert!(two.begin_work());
        // Two unauthenticated connections hold all they may; the reserve stays free.
        assert_eq!(a.admit(ip("10.0.0.9")).unwrap_err(), Refusal::Full);
        one.set_authenticated(true);
        let three = a.admit(ip("10.0.0.9")).unwrap();
        assert!(three.begin_work());
        assert_eq!(a.open(), (3, 2));
        two.set_authenticated(true);
        assert_eq!(a.open(), (3, 1));
        // A new bind makes a connection unauthenticated again.
        two.set_authenticated(false);
        assert_eq!(a.open(), (3, 2));
    }

    #[test]
    fn per_address_limits() {
        let a = Admission::new(limits(100, 0, 3, 2));
        let x = a.admit(ip("192.0.2.1")).unwrap();
        let y = a.admit(ip("192.0.2.1")).unwrap();
        assert!(y.begin_work());
        // The address holds its two unauthenticated connections: its idle one gives way.
        let z = a.admit(ip("192.0.2.1")).unwrap();
        assert!(x.is_evicted() && !y.is_evicted());
        assert!(z.begin_work());
        // Both busy now: refused.
        assert_eq!(
            a.admit(ip("192.0.2.1")).unwrap_err(),
            Refusal::UnauthenticatedAddress
        );
        y.set_authenticated(true);
        z.set_authenticated(true);
        let w = a.admit(ip("192.0.2.1")).unwrap();
        // Three connections, all it may hold; authenticated ones never give way.
        assert!(w.begin_work());
        assert_eq!(a.admit(ip("192.0.2.1")).unwrap_err(), Refusal::Address);
        // Other addresses, and the local socket, are not affected.
        let _other = a.admit(ip("192.0.2.2")).unwrap();
        let _local = a.admit(None).unwrap();
        // IPv6 clients count by their /64; IPv4-mapped addresses as IPv4.
        let v6a = a.admit(ip("2001:db8::1")).unwrap();
        let v6b = a.admit(ip("2001:db8::2:3")).unwrap();
        assert!(v6a.begin_work() && v6b.begin_work());
        assert_eq!(
            a.admit(ip("2001:db8::ffff:1")).unwrap_err(),
            Refusal::UnauthenticatedAddress
        );
        assert!(a.admit(ip("2001:db8:0:1::1")).is_ok());
        assert_eq!(
            address_key("::ffff:192.0.2.1".parse().unwrap()),
            "192.0.2.1".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn a_small_table_keeps_room_for_unauthenticated_clients() {
        // The default reserve (256) would leave a 200-place table one unauthenticated
        // place; it takes at most half.
        let l = limits(200, 256, 0, 0);
        assert_eq!(l.max_unauthenticated(), 100);
        assert_eq!(limits(4096, 256, 0, 0).max_unauthenticated(), 3840);
    }
}
