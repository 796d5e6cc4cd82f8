//! Nested transactions as savepoints over an undo log, shared by both backends.
//!
//! While at least one nested transaction is open, every write first records what it is about
//! to overwrite (the key and its previous value, or the fact that it was absent). Aborting a
//! nested transaction writes those previous states back, newest first, down to the mark left
//! by the matching `begin_nested`; committing one just forgets the mark, so its entries become
//! part of the parent's. This keeps nested transactions independent of what the storage engine
//! offers and lets them nest to any depth.

use crate::{KvError, KvResult, TableId};

/// The previous state of one key, to be written back when a nested transaction aborts.
#[derive(Debug)]
pub(crate) struct UndoEntry {
    /// Table of the key.
    pub(crate) table: TableId,
    /// The key that was overwritten or removed.
    pub(crate) key: Vec<u8>,
    /// Its value before the change, or `None` when it did not exist.
    pub(crate) old: Option<Vec<u8>>,
}

/// Savepoint marks and the undo entries recorded since the outermost one.
#[derive(Debug, Default)]
pub(crate) struct UndoLog {
    entries: Vec<UndoEntry>,
    marks: Vec<usize>,
}

impl UndoLog {
    /// Number of open nested transactions.
    pub(crate) fn depth(&self) -> usize {
        self.marks.len()
    }

    /// Whether writes must currently record their previous state.
    pub(crate) fn active(&self) -> bool {
        !self.marks.is_empty()
    }

    /// Opens a nested transaction.
    pub(crate) fn begin(&mut self) {
        self.marks.push(self.entries.len());
    }

    /// Records the previous state of a key about to change (no-op outside nested transactions).
    pub(crate) fn record(&mut self, table: TableId, key: &[u8], old: Option<Vec<u8>>) {
        if self.active() {
            self.entries.push(UndoEntry {
                table,
                key: key.to_vec(),
                old,
            });
        }
    }

    /// Keeps the innermost nested transaction's changes as part of its parent.
    pub(crate) fn commit(&mut self) -> KvResult<()> {
        self.marks.pop().ok_or(KvError::NoNestedTxn)?;
        if self.marks.is_empty() {
            self.entries.clear();
        }
        Ok(())
    }

    /// Closes the innermost nested transaction and returns the entries to write back, in the
    /// order they must be applied (newest change first).
    pub(crate) fn abort(&mut self) -> KvResult<Vec<UndoEntry>> {
        let mark = self.marks.pop().ok_or(KvError::NoNestedTxn)?;
        let mut undone = self.entries.split_off(mark);
        undone.reverse();
        if self.marks.is_empty() {
            self.entries.clear();
        }
        Ok(undone)
    }
}
