//! Handles a machine hands out for what it owns: plain indices behind newtypes, so that a
//! connection is never mistaken for an interface (docs/architecture.md, "Typed handles").

/// One connection or byte stream of a machine: a host's TCP connection, an ideal flow.
/// Local to the machine that issued it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ConnId(pub u32);

/// One of the interfaces a machine was placed on, numbered from 0 in placement order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct IfaceId(pub u32);

impl ConnId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl IfaceId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
