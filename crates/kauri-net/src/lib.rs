//! Connection rules shared by every TCP listener Kauri has (LDAP, LDAPS, the global
//! catalog, and the Kerberos and DNS TCP listeners as they come): who is admitted, how many
//! from one address, which connection goes when the service is full, how long a request may
//! take to arrive, and the counters that show each rule at work.
//!
//! The rules follow Active Directory's LDAP policies where it has them (MaxConnections,
//! InitRecvTimeout, MaxConnIdleTime) and add what AD leaves to the network: per-address
//! limits, a reserve for authenticated clients, and a time limit on each request.

#![deny(missing_docs)]

pub mod admission;
pub mod counters;
pub mod deadline;
pub mod listen;

pub use admission::{address_key, Admission, Limits, Refusal, Slot};
pub use counters::{Close, NetCounters};
pub use deadline::{is_request_timeout, Guarded, RequestClock};
pub use listen::{accept_admitted, listen, TcpUdp};
