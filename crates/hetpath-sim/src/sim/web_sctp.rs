//! Web flows over a message transport (SCTP, seed 001 sections IV and V): the browser
//! of `traffic::web` maps its channel k to stream k of one association that serves the
//! whole flow, so that a lost packet holds up only the objects on its stream (messages
//! of one stream are delivered in order, independently of the others: RFC 4960 section
//! 6.5).
//!
//! The scenario layer places the two endpoints (the browser's on `to`, which starts the
//! association, and the server's on `from`) and hands them over with `set_web_port`;
//! this file reaches them only through `Machine::messages`, the machine contract's
//! application face, so the simulator core still names no concrete machine. A fetch on
//! channel k is a `request`-byte message on stream k; once the server has that whole
//! message it sends one message of the object's size on stream k (partial delivery lets
//! one larger than the receive window through: `hetpath_proto::sctp`), and the object has
//! arrived when that message is delivered to the browser.
//!
//! Both endpoints report on the flow's stream (`bind_stream`): each `Delivered` is the
//! cue to read the messages it has, `Lost` counts the flow's retransmissions as for an
//! SCTP flow, an ABORT aborts the flow.

use super::machines::Owned;
use super::{FlowId, MachineId, Simulation};
use hetpath_proto::machine::{Event, MessagePort};
use hetpath_proto::tcp;
use std::collections::{BTreeMap, VecDeque};

/// The replies the server owes, per stream, in request order (one at a time per stream:
/// the browser does not pipeline).
#[derive(Debug, Default)]
pub(super) struct PortWeb {
    owed: BTreeMap<u16, VecDeque<u64>>,
}

impl Simulation {
    /// Makes web flow `f` run over the message endpoints `server` (on `from`) and
    /// `browser` (on `to`, which opens the association), both bound to the flow.
    pub fn set_web_port(&mut self, f: FlowId, server: MachineId, browser: MachineId) {
        let w = self.flows[f.index()].web.as_mut().expect("set_web first");
        w.hosts = Some((server, browser));
        w.port = Some(PortWeb::default());
    }

    /// Machine `m`'s application face.
    fn port(&mut self, m: MachineId) -> &mut dyn MessagePort {
        match &mut self.machines[m.index()].machine {
            Owned::Other(x) => x.messages().expect("a message transport"),
            _ => unreachable!("machine {m:?} is a message endpoint"),
        }
    }

    /// A fetch on channel `k`: the request on stream `k`, the reply owed for it.
    pub(super) fn port_fetch(&mut self, f: FlowId, k: u32, request: u64, reply: u64) {
        let (_, browser) = self.web_machines(f);
        let stream = u16::try_from(k).expect("parallel <= streams (checked by the loader)");
        let w = self.web_port(f);
        w.owed.entry(stream).or_default().push_back(reply);
        // Fails only once the association is gone (an ABORT): the flow is aborted then.
        let _ = self.port(browser).send(stream, request);
    }

    /// What endpoint `m` reported on web flow `f`.
    pub(super) fn port_event(&mut self, f: FlowId, m: MachineId, ev: Event) {
        let (server, _) = self.web_machines(f);
        match ev {
            Event::Delivered { .. } => {
                let now = self.q.now();
                while let Some(msg) = self.port(m).poll_message() {
                    if m == server {
                        let reply = self.web_port(f).owed.get_mut(&msg.stream);
                        let Some(reply) = reply.and_then(|q| q.pop_front()) else {
                            continue;
                        };
                        let _ = self.port(server).send(msg.stream, reply);
                        self.drive(server);
                    } else {
                        let mut out = Vec::new();
                        self.web(f)
                            .browser
                            .on_complete(now, msg.stream as u32, &mut out);
                        self.web_apply(f, out);
                    }
                }
            }
            Event::Lost { .. } => self.flows[f.index()].lost += 1,
            Event::Tcp {
                event: tcp::Event::Aborted,
                ..
            } => self.flows[f.index()].aborted = true,
            _ => {}
        }
    }

    /// T3-rtx expirations of the server's endpoint so far: SCTP's counterpart of the
    /// retransmission timeouts of a TCP web flow's server connections.
    pub(super) fn port_timeouts(&mut self, f: FlowId) -> u64 {
        let (server, _) = self.web_machines(f);
        self.port(server).timeouts()
    }

    fn web_port(&mut self, f: FlowId) -> &mut PortWeb {
        self.web(f).port.as_mut().expect("a web flow over messages")
    }
}
