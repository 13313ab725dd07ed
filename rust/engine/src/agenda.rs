//! The event agenda: one slot per unit (a unit has at most one pending event: its failure,
//! or the end of its repair), kept in a tournament tree ordered by (time, sequence).
//!
//! Rescheduling a unit overwrites its slot, which also cancels what was there (a standby
//! switch changes an idle unit's failure time), and costs log2(units) comparisons with no
//! data moved; the earliest event is always at the root. Equal times pop in the order
//! they were scheduled, as with a heap keyed by (time, sequence).

pub struct Agenda {
    size: usize,
    time: Vec<f64>,
    seq: Vec<u64>,
    kind: Vec<u32>,
    /// tree[i] for i in 1..size is the winning slot of that subtree; leaves are implicit.
    tree: Vec<u32>,
    counter: u64,
}

impl Agenda {
    pub fn new(units: usize) -> Self {
        let size = units.next_power_of_two().max(2);
        let mut a = Agenda {
            size,
            time: vec![f64::INFINITY; size],
            seq: vec![u64::MAX; size],
            kind: vec![0; size],
            tree: vec![0; size],
            counter: 0,
        };
        a.clear();
        a
    }

    /// Empty every slot.
    pub fn clear(&mut self) {
        self.time.iter_mut().for_each(|t| *t = f64::INFINITY);
        self.seq.iter_mut().for_each(|s| *s = u64::MAX);
        self.counter = 0;
        for i in (1..self.size).rev() {
            let (a, b) = (self.child(2 * i), self.child(2 * i + 1));
            self.tree[i] = if self.less(b, a) { b } else { a };
        }
    }

    #[inline]
    fn child(&self, i: usize) -> u32 {
        if i >= self.size {
            (i - self.size) as u32
        } else {
            self.tree[i]
        }
    }

    #[inline]
    fn less(&self, a: u32, b: u32) -> bool {
        let (ta, tb) = (self.time[a as usize], self.time[b as usize]);
        ta < tb || (ta == tb && self.seq[a as usize] < self.seq[b as usize])
    }

    #[inline]
    fn fix(&mut self, slot: usize) {
        let mut i = (self.size + slot) >> 1;
        while i >= 1 {
            let (a, b) = (self.child(2 * i), self.child(2 * i + 1));
            self.tree[i] = if self.less(b, a) { b } else { a };
            i >>= 1;
        }
    }

    /// Schedule `slot`'s event of `kind` at `time`, replacing whatever it had.
    #[inline]
    pub fn set(&mut self, slot: usize, time: f64, kind: u32) {
        self.counter += 1;
        self.time[slot] = time;
        self.seq[slot] = self.counter;
        self.kind[slot] = kind;
        self.fix(slot);
    }

    /// Nothing pending for `slot`.
    #[inline]
    pub fn cancel(&mut self, slot: usize) {
        self.time[slot] = f64::INFINITY;
        self.seq[slot] = u64::MAX;
        self.fix(slot);
    }

    /// The earliest pending event as (slot, time, kind); time is infinite when none.
    #[inline]
    pub fn first(&self) -> (usize, f64, u32) {
        let s = self.tree[1] as usize;
        (s, self.time[s], self.kind[s])
    }

    /// Take `slot`'s event off without repairing the tree yet: the caller must `set` the
    /// slot again or call `settle` before the next `first`. Saves a walk when, as usual,
    /// the unit gets its next event at once.
    #[inline]
    pub fn take(&mut self, slot: usize) {
        self.time[slot] = f64::INFINITY;
        self.seq[slot] = u64::MAX;
    }

    /// Finish a `take` whose slot got no new event.
    #[inline]
    pub fn settle(&mut self, slot: usize) {
        if self.time[slot] == f64::INFINITY {
            self.fix(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
