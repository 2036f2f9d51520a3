//! The simulator's handles: plain indices behind newtypes, so that a node is never
//! mistaken for a link direction or a flow (docs/architecture.md, "Typed handles").

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

handle!(
    /// A node.
    NodeId
);
handle!(
    /// A point-to-point link: a pair of directions.
    LinkId
);
handle!(
    /// One direction of a link, with its own queue, transmitter and channel.
    DirId
);
handle!(
    /// A flow of the scenario.
    FlowId
);
handle!(
    /// A machine placed on a node (a host, a PEP, a router, ...).
    MachineId
);
