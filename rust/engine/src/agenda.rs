//! The event agenda: one slot per unit (a unit has at most one pending event: its failure,
//! or the end of its repair), kept in a tournament tree of packed keys.
//!
//! A key is (time bits, sequence, slot) in one u128, so comparing two events is one integer
//! comparison and equal times pop in the order they were scheduled, as with a heap keyed
//! by (time, sequence). Rescheduling a unit overwrites its slot, which also cancels what
//! was there (a standby switch moves an idle unit's failure), and walks up log2(units)
//! levels, stopping early where the winner does not change. The earliest event is the root.

const SLOT_BITS: u32 = 20;
/// Units an agenda can hold (one slot each).
pub const MAX_SLOTS: usize = 1 << SLOT_BITS;
const EMPTY_SEQ: u64 = (1u64 << (64 - SLOT_BITS)) - 1;

pub struct Agenda {
    size: usize,
    /// nodes[size + slot] is a slot's key; nodes[i] for 1 <= i < size the least below i.
    nodes: Vec<u128>,
    kind: Vec<u32>,
    counter: u64,
}

#[inline]
fn key(time: f64, seq: u64, slot: usize) -> u128 {
    // Times are >= 0 (or +inf), so their IEEE bits order like the numbers.
    ((time.to_bits() as u128) << 64) | ((seq << SLOT_BITS) | slot as u64) as u128
}

#[inline]
fn empty(slot: usize) -> u128 {
    key(f64::INFINITY, EMPTY_SEQ, slot)
}

impl Agenda {
    /// An agenda for `units` slots (at most `MAX_SLOTS`, checked when compiling).
    pub fn new(units: usize) -> Self {
        let size = units.next_power_of_two().max(2);
        let mut a = Agenda {
            size,
            nodes: vec![0; 2 * size],
            kind: vec![0; size],
            counter: 0,
        };
        a.clear();
        a
    }

    /// Empty every slot.
    pub fn clear(&mut self) {
        for s in 0..self.size {
            self.nodes[self.size + s] = empty(s);
        }
        for i in (1..self.size).rev() {
            self.nodes[i] = self.nodes[2 * i].min(self.nodes[2 * i + 1]);
        }
        self.counter = 0;
    }

    #[inline(always)]
    fn fix(&mut self, slot: usize) {
        let mut i = self.size + slot;
        let mut cur = self.nodes[i];
        while i > 1 {
            let win = cur.min(self.nodes[i ^ 1]);
            i >>= 1;
            if self.nodes[i] == win {
                break; // nothing above changes
            }
            self.nodes[i] = win;
            cur = win;
        }
    }

    /// Schedule `slot`'s event of `kind` at `time` (>= the current event's time),
    /// replacing whatever it had.
    #[inline(always)]
    pub fn set(&mut self, slot: usize, time: f64, kind: u32) {
        self.counter += 1;
        self.nodes[self.size + slot] = key(time, self.counter, slot);
        self.kind[slot] = kind;
        self.fix(slot);
    }

    /// Nothing pending for `slot`.
    #[inline]
    pub fn cancel(&mut self, slot: usize) {
        self.nodes[self.size + slot] = empty(slot);
        self.fix(slot);
    }

    /// The earliest pending event as (slot, time, kind); time is infinite when none.
    #[inline]
    pub fn first(&self) -> (usize, f64, u32) {
        let k = self.nodes[1];
        let slot = (k as u64 & ((1 << SLOT_BITS) - 1)) as usize;
        (slot, f64::from_bits((k >> 64) as u64), self.kind[slot])
    }

    /// Take the earliest event's slot off without repairing the tree yet: the caller then
    /// `set`s the slot again or calls `settle`, before the next `first`. Safe because the
    /// taken key was the least, so it is exactly the stale value along its own path, and
    /// new events (never earlier than it) cannot stop a walk above it.
    #[inline]
    pub fn take(&mut self, slot: usize) {
        self.nodes[self.size + slot] = empty(slot);
    }

    /// Finish a `take` whose slot got no new event.
    #[inline]
    pub fn settle(&mut self, slot: usize) {
        if self.nodes[self.size + slot] == empty(slot) {
            // Walk the whole path: every node on it still holds the taken key.
            let mut i = self.size + slot;
            while i > 1 {
                let win = self.nodes[i].min(self.nodes[i ^ 1]);
                i >>= 1;
                self.nodes[i] = win;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn pops_in_time_then_schedule_order() {
        let mut a = Agenda::new(5);
        a.set(3, 2.0, 0);
        a.set(1, 1.0, 1);
        a.set(4, 2.0, 0);
        a.set(0, 5.0, 0);
        a.set(0, 0.5, 1); // reschedule replaces
        let mut seen = vec![];
        while a.first().1.is_finite() {
            let (s, t, _) = a.first();
            seen.push((s, t));
            a.cancel(s);
        }
        assert_eq!(seen, vec![(0, 0.5), (1, 1.0), (3, 2.0), (4, 2.0)]);
    }

    #[test]
    fn take_and_settle_match_a_sorted_reference() {
        // Random schedule/take/settle against a brute-force minimum.
        let n = 37;
        let mut a = Agenda::new(n);
        let mut r = Stream::new(1, 1);
        let mut times = vec![f64::INFINITY; n];
        let mut seqs = vec![u64::MAX; n];
        let mut seq = 0;
        for s in 0..n {
            seq += 1;
            times[s] = r.uniform();
            seqs[s] = seq;
            a.set(s, times[s], 0);
        }
        for _ in 0..5000 {
            let best = (0..n)
                .filter(|&s| times[s].is_finite())
                .min_by(|&x, &y| times[x].total_cmp(&times[y]).then(seqs[x].cmp(&seqs[y])));
            let (slot, t, _) = a.first();
            match best {
                None => assert!(t.is_infinite()),
                Some(b) => assert_eq!((slot, t), (b, times[b])),
            }
            if best.is_none() {
                break;
            }
            let now = t;
            a.take(slot);
            times[slot] = f64::INFINITY;
            if r.uniform() < 0.9 {
                let other = if r.uniform() < 0.3 {
                    (r.uniform() * n as f64) as usize
                } else {
                    slot
                };
                seq += 1;
                times[other] = now + r.uniform();
                seqs[other] = seq;
                a.set(other, times[other], 0);
            }
            a.settle(slot);
        }
    }
}
