//! LLE-TCP's sink at a WLAN station (Kliazovich and Granelli 2004, the seed's [20, 21]):
//! the station's TCP ACKs toward a boosted sender are suppressed before the shared medium,
//! since the edge router confirms each datagram from the MAC's ACK instead (`bridge.rs`).
//! Only pure ACKs go: the handshake, FINs and RSTs, and data, still leave. Under ESP the
//! sink opens its own host's packets, as the booster does (`sender::own_segment`).

use super::sender::own_segment;
use crate::machine::{At, Counter, Hooks, Machine, NodeView, Verdict};
use crate::packet::{Addr, Packet, TcpFlags, TcpSegment};
use crate::time::Time;

pub struct LleSink {
    /// The boosted sender whose ACKs the edge router stands in for.
    sender: Addr,
    suppressed: u64,
}

impl LleSink {
    pub fn new(sender: Addr) -> LleSink {
        LleSink {
            sender,
            suppressed: 0,
        }
    }
}

impl Machine for LleSink {
    fn kind(&self) -> &'static str {
        "lle-sink"
    }

    fn hooks(&self) -> Hooks {
        Hooks {
            departure: true,
            ..Hooks::default()
        }
    }

    fn handle_packet(&mut self, _: Time, _: At, p: &mut Packet, _: &dyn NodeView) -> Verdict {
        let pure_ack = |s: &TcpSegment| {
            let control = [TcpFlags::SYN, TcpFlags::FIN, TcpFlags::RST];
            s.len == 0 && !control.iter().any(|&f| s.flags.contains(f))
        };
        if p.ip.dst == self.sender && own_segment(p).is_some_and(|s| pure_ack(&s)) {
            self.suppressed += 1;
            return Verdict::Consume;
        }
        Verdict::Pass
    }

    fn counters(&self, out: &mut Vec<Counter>) {
        out.push(("acks_suppressed", self.suppressed));
    }
}
