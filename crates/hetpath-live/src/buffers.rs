//! The packet buffers: one preallocated slab of fixed-size slots, so the link core never
//! allocates per packet. A slot is taken when a packet is read and given back when the
//! packet is delivered or lost; when none is free the packet is dropped (counted apart
//! from the link's own losses, as a host whose socket buffer is full would drop it).

/// A buffer slot: what a link direction queues in place of the simulator's `FrameKey`
/// (docs/architecture.md, convention 7).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Slot(u32);

impl Slot {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The largest packet a slot holds: an IPv4 packet at the TUN device's largest MTU we
/// set (1500), with room to spare for a device with a larger one.
pub const SLOT_BYTES: usize = 2048;

pub struct Buffers {
    /// `capacity * SLOT_BYTES` bytes, zeroed at allocation: the kernel maps pages only
    /// when first written, so a large slab costs address space, not memory.
    data: Vec<u8>,
    len: Vec<u16>,
    free: Vec<u32>,
}

impl Buffers {
    pub fn new(capacity: usize) -> Buffers {
        Buffers {
            data: vec![0; capacity * SLOT_BYTES],
            len: vec![0; capacity],
            free: (0..capacity as u32).rev().collect(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.len.len()
    }

    pub fn in_use(&self) -> usize {
        self.capacity() - self.free.len()
    }

    /// A free slot, to be filled through `space` and then `set_len`.
    pub fn take(&mut self) -> Option<Slot> {
        self.free.pop().map(Slot)
    }

    pub fn give_back(&mut self, s: Slot) {
        debug_assert!(!self.free.contains(&s.0), "slot given back twice");
        self.free.push(s.0);
    }

    /// The whole slot, for a read to fill.
    pub fn space(&mut self, s: Slot) -> &mut [u8] {
        let i = s.0 as usize * SLOT_BYTES;
        &mut self.data[i..i + SLOT_BYTES]
    }

    pub fn set_len(&mut self, s: Slot, len: usize) {
        self.len[s.0 as usize] = len.min(SLOT_BYTES) as u16;
    }

    /// The packet held in a slot.
    pub fn get(&self, s: Slot) -> &[u8] {
        let i = s.0 as usize * SLOT_BYTES;
        &self.data[i..i + self.len[s.0 as usize] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_bounded() {
        let mut b = Buffers::new(2);
        let x = b.take().unwrap();
        let y = b.take().unwrap();
        assert!(b.take().is_none());
        b.space(x)[..3].copy_from_slice(b"abc");
        b.set_len(x, 3);
        assert_eq!(b.get(x), b"abc");
        b.give_back(x);
        assert_eq!(b.in_use(), 1);
        assert_eq!(b.take(), Some(x));
        assert_ne!(x, y);
    }
}
