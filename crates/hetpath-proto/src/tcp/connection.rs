//! A TCP endpoint as a sans-IO state machine: `handle_segment`, `poll_transmit`,
//! `poll_timeout`, `handle_timeout`, `poll_event` (docs/architecture.md, "The machine
//! contract").
//!
//! It owns a `Sender` and a `Receiver` and adds the connection state of RFC 9293 section
//! 3.3.2: the three-way handshake with SYN retries (section 3.5), the FIN exchange with
//! its closing states, RST and aborts. Sequence numbers are 64-bit offsets from each
//! side's ISN: the SYN is 0, data starts at 1.
//!
//! Deviation, documented in docs/model-notes.md: no TCB is ever deleted. A connection in
//! CLOSED stays silent, except that it acknowledges a retransmitted FIN as TIME-WAIT
//! would, rather than answering with a reset.

use super::config::{HandshakeAck, TcpConfig};
use super::receiver::Receiver;
use super::recovery::AckInput;
use super::sender::{Expiry, Outgoing, Sender, SenderStats};
use crate::cc::Algorithm;
use crate::packet::{
    Body, Endpoint, Packet, SackList, SynOptions, TcpFlags, TcpSegment, Timestamps,
    MAX_SACK_BLOCKS_WITH_TIMESTAMPS, TIMESTAMP_TICK_NS,
};
use crate::rap::{Echo, Feedback};
use crate::time::{earliest, Dur, Time};
use std::collections::VecDeque;

/// The connection states of RFC 9293 section 3.3.2 (LISTEN belongs to the host).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Active open: our SYN is out.
    SynSent,
    /// Passive open: the peer's SYN arrived and our SYN-ACK is out.
    SynReceived,
    Established,
    /// We closed first: our FIN is queued or sent and not yet acknowledged.
    FinWait1,
    /// We closed first and our FIN is acknowledged: waiting for the peer's.
    FinWait2,
    /// The peer closed first; we may still send.
    CloseWait,
    /// Both closed at once: the peer's FIN arrived before ours was acknowledged.
    Closing,
    /// The peer closed first, then we did: waiting for the ACK of our FIN.
    LastAck,
    /// We closed first and both FINs are acknowledged: lingering 2 MSL to acknowledge a
    /// retransmitted FIN.
    TimeWait,
    Closed,
    /// CLOSED after an abort: the retry limit was exceeded, the peer reset the
    /// connection, or the application aborted it (RFC 9293 section 3.10.5). Kept apart
    /// from `Closed` so that drivers can tell a failed transfer.
    Aborted,
}

impl State {
    /// Both SYNs exchanged: data, ACKs and their timers are live.
    pub fn is_synchronized(self) -> bool {
        !matches!(self, State::SynSent | State::SynReceived | State::Aborted)
    }
}

/// Things the driver may want to know, in the order they happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// It entered this state (RFC 9293 section 3.3.2).
    State(State),
    Connected,
    /// A loss episode began (fast retransmit).
    RecoveryStarted,
    /// The retransmission timer expired; `count` consecutive expiries so far.
    Timeout {
        count: u32,
    },
    /// The peer finished sending (its FIN arrived in order).
    PeerFinished,
    /// Our data and FIN are acknowledged and the peer has finished (TIME-WAIT or CLOSED).
    Closed,
    /// The retry limit was exceeded or the peer reset the connection.
    Aborted,
    /// ILC-TCP: the retransmission timer expired and TCP asks WHAT_SHOULD_TCP_DO; answer
    /// with `handle_advice` (seed 002 Figure 6). Nothing is sent until then.
    WhatShouldTcpDo,
    /// ILC-TCP: frozen by the State Manager's FREEZE.
    Frozen,
    /// ILC-TCP: RESTOREd; the first unacknowledged segment goes out next.
    Restored,
    /// It sent an ACK advertising a zero window: its receive buffer is full.
    ZeroWindowAck,
    /// It retransmitted the segment starting at `seq`: in loss recovery (fast
    /// retransmit, SACK or partial ACK: RFC 5681, 6582, 6675), or after a retransmission
    /// timeout (`timeout`, RFC 6298 section 5). Only with `set_detailed_events`.
    Retransmitted {
        seq: u64,
        timeout: bool,
    },
}

pub struct Connection {
    /// Its controller's recipe: the controller is built again once the handshake settles
    /// the segment size (`on_peer_syn`).
    algorithm: Algorithm,
    local: Endpoint,
    remote: Endpoint,
    state: State,
    pub(super) cfg: TcpConfig,
    pub(super) sender: Sender,
    receiver: Receiver,
    /// SYN (or SYN-ACK) transmissions so far, and when the last one left.
    syn_sent: u32,
    syn_sent_at: Time,
    syn_due: bool,
    syn_deadline: Option<Time>,
    peer_sack: bool,
    /// The window-scale shift in effect for what we send: ours, once both ends offered
    /// the option (RFC 7323 section 2.2); 0 until the peer's SYN and without scaling.
    wire_shift: u8,
    /// The peer's FIN arrived before we closed (we are the passive closer).
    peer_closed_first: bool,
    /// Router feedback that arrived on data, to go back on the next ACK. Echoing is the
    /// receiver's part of XCP, VCP and MPCP (Katabi et al. 2002 section 3.2), whatever
    /// controller the receiver itself runs; an ACK without feedback to echo carries none.
    echo: Echo,
    /// Report every retransmission as an event (`set_detailed_events`).
    detailed: bool,
    /// When TIME-WAIT ends.
    time_wait_deadline: Option<Time>,
    send_rst: bool,
    /// The next segment is the pure ACK completing the handshake (`HandshakeAck`).
    handshake_ack_due: bool,
    /// Timestamps (RFC 7323 section 3.2): both SYNs carried the option.
    ts_on: bool,
    /// TS.Recent and Last.ACK.sent (RFC 7323 section 4.3).
    ts_recent: u32,
    last_ack_sent: u64,
    pub(super) events: VecDeque<Event>,
}

impl Connection {
    /// Active open: the first `poll_transmit` yields the SYN.
    pub fn connect(
        cfg: TcpConfig,
        cc: &Algorithm,
        local: Endpoint,
        remote: Endpoint,
    ) -> Connection {
        Connection::new(cfg, cc, local, remote, State::SynSent)
    }

    /// Passive open on an arriving SYN: the first `poll_transmit` yields the SYN-ACK.
    pub fn accept(
        cfg: TcpConfig,
        cc: &Algorithm,
        local: Endpoint,
        remote: Endpoint,
        syn: &TcpSegment,
    ) -> Connection {
        let mut c = Connection::new(cfg, cc, local, remote, State::SynReceived);
        c.on_peer_syn(syn);
        c
    }

    fn new(
        cfg: TcpConfig,
        cc: &Algorithm,
        local: Endpoint,
        remote: Endpoint,
        state: State,
    ) -> Connection {
        Connection {
            algorithm: cc.clone(),
            local,
            remote,
            state,
            sender: Sender::new(cfg, cc.build(cfg.cc_config())),
            receiver: Receiver::new(cfg.recv_buffer, cfg.delayed_ack, cfg.mss)
                .with_quick_ack(cfg.quick_ack),
            cfg,
            syn_sent: 0,
            syn_sent_at: Time::ZERO,
            syn_due: true,
            syn_deadline: None,
            peer_sack: false,
            wire_shift: 0,
            peer_closed_first: false,
            echo: Echo::default(),
            detailed: false,
            time_wait_deadline: None,
            send_rst: false,
            handshake_ack_due: false,
            ts_on: false,
            ts_recent: 0,
            last_ack_sent: 0,
            events: VecDeque::new(),
        }
    }

    fn on_peer_syn(&mut self, syn: &TcpSegment) {
        self.peer_sack = syn.syn_options.is_some_and(|o| o.sack_permitted);
        if self.cfg.sack && self.peer_sack {
            self.sender.enable_sack();
        }
        if let Some(o) = syn.syn_options {
            // RFC 9293 section 3.7.1: send no larger segments than the peer's MSS.
            if o.mss > 0 {
                self.sender.cfg.mss = self.sender.cfg.mss.min(o.mss as u32);
            }
            let own = self.cfg.window_scale();
            self.wire_shift = if own > 0 && o.window_scale > 0 {
                own
            } else {
                0
            };
        }
        if let (true, Some(ts)) = (self.cfg.timestamps, syn.ts) {
            self.ts_on = true;
            self.ts_recent = ts.val;
            // Linux's effective MSS: the 12 option bytes come out of each segment's payload
            // (`tcp_current_mss`), so a full segment still fits the path's MTU.
            self.sender.cfg.mss = self.sender.cfg.mss.saturating_sub(12).max(1);
        }
        let mss = self.sender.cfg.mss;
        if mss != self.cfg.mss {
            // The controller counts in the segments actually sent (Linux: `mss_cache`),
            // its initial window the same number of them.
            let base = self.cfg.cc_config();
            self.sender.cc = self.algorithm.build(crate::cc::CcConfig {
                mss,
                initial_window: base.initial_window / self.cfg.mss as u64 * mss as u64,
                ..base
            });
        }
        self.sender.on_window_update(syn.window);
        self.receiver.on_syn(self.cfg.sack && self.peer_sack);
    }

    /// The timestamp clock (RFC 7323 section 5.4): `now` in ticks, mod 2^32.
    fn ts_clock(now: Time) -> u32 {
        (now.0 / TIMESTAMP_TICK_NS) as u32
    }

    // ----- application side -----

    /// Queues `bytes` more bytes for sending.
    pub fn write(&mut self, bytes: u64) {
        self.sender.write(bytes);
    }
    /// No more data: a FIN follows the last byte (RFC 9293 section 3.10.4 CLOSE). Before
    /// the connection is established the close waits for it, as in SYN-RECEIVED.
    pub fn close(&mut self) {
        self.sender.fin_queued = true;
        self.advance_close();
    }
    /// Lets the application read on its own schedule (bounded buffer, back-pressure).
    /// Also report each retransmission (`Event::Retransmitted`): for a driver that
    /// traces; off, a retransmission costs no event.
    pub fn set_detailed_events(&mut self, on: bool) {
        self.detailed = on;
    }

    pub fn set_auto_read(&mut self, on: bool) {
        self.receiver.set_auto_read(on);
    }
    pub fn readable(&self) -> u64 {
        self.receiver.readable()
    }
    pub fn read(&mut self, max: u64) -> u64 {
        self.receiver.read(max)
    }
    /// Bytes written but not yet acknowledged by the peer (the send buffer in use).
    pub fn send_backlog(&self) -> u64 {
        self.sender.app_end.saturating_sub(self.sender.snd_una)
    }
    /// The application aborts: a RST goes to the peer (RFC 9293 section 3.10.5 ABORT).
    pub fn reset(&mut self) {
        if self.state != State::Aborted {
            self.abort(true);
        }
    }

    // ----- driver side -----

    pub fn handle_segment(&mut self, now: Time, seg: &TcpSegment) {
        if self.state == State::Aborted {
            return;
        }
        if seg.flags.contains(TcpFlags::RST) {
            return self.on_reset(seg);
        }
        if matches!(self.state, State::TimeWait | State::Closed) {
            // RFC 9293 section 3.10.7.4: everything arrived, so data or a FIN now is a
            // duplicate sent because our last ACK was lost: acknowledge it (a pure ACK
            // needs no answer). A retransmitted FIN restarts the 2 MSL wait.
            let fin = seg.flags.contains(TcpFlags::FIN);
            if seg.len > 0 || fin {
                self.receiver.request_ack();
            }
            if fin && self.state == State::TimeWait {
                self.time_wait_deadline = Some(now + self.cfg.time_wait);
            }
            return;
        }
        let syn = seg.flags.contains(TcpFlags::SYN);
        match self.state {
            State::SynSent => {
                if !(syn && seg.flags.contains(TcpFlags::ACK) && seg.ack == 1) {
                    return;
                }
                self.on_peer_syn(seg);
                self.take_syn_rtt(now);
                self.establish();
                if self.cfg.handshake_ack == HandshakeAck::Separate {
                    // RFC 9293 section 3.5 (Figure 6, line 4): the handshake's own ACK,
                    // before any data.
                    self.receiver.request_ack();
                    self.handshake_ack_due = true;
                }
            }
            State::SynReceived => {
                if syn {
                    self.syn_due = true; // our SYN-ACK was lost: send it again
                    return;
                }
                if !(seg.flags.contains(TcpFlags::ACK) && seg.ack >= 1) {
                    return;
                }
                self.take_syn_rtt(now);
                self.establish();
            }
            _ if syn => {
                self.receiver.request_ack(); // a retransmitted SYN-ACK: our ACK was lost
                return;
            }
            _ => {}
        }
        if let (true, Some(ts)) = (self.ts_on, seg.ts) {
            // RFC 7323 section 4.3 (2): TS.Recent follows the segment that the next ACK
            // acknowledges (the oldest unacknowledged one under delayed ACKs).
            if ts.val.wrapping_sub(self.ts_recent) as i32 >= 0 && seg.seq <= self.last_ack_sent {
                self.ts_recent = ts.val;
            }
        }
        if let Some(fb) = seg.rap.as_deref() {
            if seg.len > 0 {
                // Router-assisted control: data carries the routers' feedback forward...
                self.echo.on_segment(seg.seq, self.cfg.mss, fb);
            } else if seg.flags.contains(TcpFlags::ACK) {
                // ...and pure ACKs carry the receiver's echo back to the sender.
                self.sender.cc.on_echo(now, fb);
            }
        }
        if seg.len > 0 || seg.flags.contains(TcpFlags::FIN) {
            let was_finished = self.receiver.fin_received();
            self.receiver
                .on_segment(now, seg.seq, seg.len, seg.flags.contains(TcpFlags::FIN));
            if !was_finished && self.receiver.fin_received() {
                self.peer_closed_first = !self.sender.fin_queued;
                self.events.push_back(Event::PeerFinished);
            }
        } else if seg.seq < self.receiver.rcv_nxt() && !syn {
            self.receiver.request_ack(); // a window probe with an old sequence number
        }
        if seg.flags.contains(TcpFlags::ACK) {
            let input = AckInput {
                ack: seg.ack,
                window: seg.window,
                sack: &seg.sack,
                carries_data: seg.len > 0 || syn || seg.flags.contains(TcpFlags::FIN),
                echoed_rtt: seg.ts.filter(|_| self.ts_on).map(|ts| {
                    let ticks = Self::ts_clock(now).wrapping_sub(ts.ecr) as u64;
                    Dur(ticks * TIMESTAMP_TICK_NS)
                }),
            };
            if self.sender.on_ack(now, input).entered_recovery {
                self.events.push_back(Event::RecoveryStarted);
            }
        }
        if self.sender.fin_queued || self.receiver.fin_received() {
            self.advance_close();
            if self.state == State::TimeWait && self.time_wait_deadline.is_none() {
                self.time_wait_deadline = Some(now + self.cfg.time_wait);
            }
        }
    }

    /// RFC 9293 section 3.10.7: a reset is acted on only if it is acceptable.
    fn on_reset(&mut self, seg: &TcpSegment) {
        let acceptable = match self.state {
            // Section 3.10.7.3: only with an ACK of our SYN.
            State::SynSent => seg.flags.contains(TcpFlags::ACK) && seg.ack == 1,
            // Section 3.10.7.4: its sequence number must be in the receive window.
            _ => {
                let (nxt, wnd) = (self.receiver.rcv_nxt(), self.receiver.window());
                if wnd == 0 {
                    seg.seq == nxt
                } else {
                    nxt <= seg.seq && seg.seq < nxt.saturating_add(wnd)
                }
            }
        };
        if !acceptable {
            return;
        }
        match self.state {
            // Both sides were done: the reset only ends the wait.
            State::Closing | State::LastAck | State::TimeWait | State::Closed => {
                self.set_state(State::Closed);
                self.time_wait_deadline = None;
            }
            _ => self.abort(false),
        }
    }

    fn take_syn_rtt(&mut self, now: Time) {
        if self.syn_sent == 1 {
            self.sender.rtt.on_sample(
                now.since(self.syn_sent_at),
                self.sender.cwnd() / self.sender.cfg.mss as u64,
            ); // Karn: only if not resent
        } else {
            self.sender.rtt.after_syn_timeout();
        }
        self.sender.rtt.reset_backoff();
    }

    fn establish(&mut self) {
        let srtt = self.sender.rtt.srtt().unwrap_or_default();
        self.sender.cc.on_init(srtt); // Linux `tcp_init_transfer`
        self.set_state(State::Established);
        self.syn_deadline = None;
        self.syn_due = false;
        self.events.push_back(Event::Connected);
        self.advance_close();
    }

    /// The closing states of RFC 9293 section 3.3.2 (Figure 5), derived from who has
    /// closed and what is acknowledged: a CLOSE moves ESTABLISHED to FIN-WAIT-1 and
    /// CLOSE-WAIT to LAST-ACK (section 3.10.4); the peer's FIN moves ESTABLISHED to
    /// CLOSE-WAIT, FIN-WAIT-1 to CLOSING and FIN-WAIT-2 to TIME-WAIT, and the ACK of our
    /// FIN moves FIN-WAIT-1 to FIN-WAIT-2, CLOSING to TIME-WAIT and LAST-ACK to CLOSED
    /// (section 3.10.7.4, fifth and eighth steps).
    fn advance_close(&mut self) {
        if !self.state.is_synchronized() || self.state == State::Closed {
            return;
        }
        let ours = self.sender.fin_queued;
        let acked = ours && self.sender.all_acked();
        let theirs = self.receiver.fin_received();
        let next = match (ours, acked, theirs) {
            (false, _, false) => State::Established,
            (false, _, true) => State::CloseWait,
            (true, false, false) => State::FinWait1,
            (true, true, false) => State::FinWait2,
            (true, false, true) if self.peer_closed_first => State::LastAck,
            (true, false, true) => State::Closing,
            (true, true, true) if self.peer_closed_first => State::Closed,
            (true, true, true) => State::TimeWait,
        };
        let closing = next != self.state && matches!(next, State::TimeWait | State::Closed);
        self.set_state(next);
        if closing {
            self.events.push_back(Event::Closed);
        }
    }

    /// Every state change is an event (`Event::State`), for drivers that trace them.
    fn set_state(&mut self, next: State) {
        if next != self.state {
            self.state = next;
            self.events.push_back(Event::State(next));
        }
    }

    pub(super) fn abort(&mut self, send_rst: bool) {
        self.set_state(State::Aborted);
        self.send_rst = send_rst;
        self.events.push_back(Event::Aborted);
    }

    /// The next packet to send now, if any.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        let mut p = Packet::empty();
        self.poll_transmit_into(now, &mut p).then_some(p)
    }

    /// The next packet to send now, written into `out` (where its driver keeps it, see
    /// `Machine::poll_transmit_into`); false, and `out` untouched, when there is none.
    pub fn poll_transmit_into(&mut self, now: Time, out: &mut Packet) -> bool {
        let seg = match self.state {
            State::Aborted if self.send_rst => {
                self.send_rst = false;
                // RFC 9293 section 3.10.5: <SEQ=SND.NXT><CTL=RST>.
                let mut s = self.segment(TcpFlags::RST | TcpFlags::ACK, self.sender.snd_max);
                s.ack = self.receiver.rcv_nxt();
                s
            }
            State::SynSent | State::SynReceived if self.syn_due => self.syn_segment(now),
            s if s.is_synchronized() => return self.data_or_ack(now, out),
            _ => return false,
        };
        *out = Packet::tcp(self.local.addr, self.remote.addr, seg);
        true
    }

    fn syn_segment(&mut self, now: Time) -> TcpSegment {
        self.syn_due = false;
        self.syn_sent += 1;
        self.syn_sent_at = now;
        self.syn_deadline = Some(now + self.sender.rtt.rto());
        let mut flags = TcpFlags::SYN;
        if self.state == State::SynReceived {
            flags = flags | TcpFlags::ACK;
            self.receiver.on_ack_sent();
        }
        let mut s = self.segment(flags, 0);
        s.ack = self.receiver.rcv_nxt();
        s.window = self.receiver.window().min(65_535); // RFC 7323 section 2.2: unscaled
        s.wscale = 0;
        s.syn_options = Some(SynOptions {
            mss: self.cfg.mss.min(65_535) as u16,
            sack_permitted: self.cfg.sack,
            window_scale: self.cfg.window_scale(),
        });
        // RFC 7323 section 3.2: offered on a SYN, answered on a SYN-ACK only if offered.
        let offer = self.cfg.timestamps && (self.state == State::SynSent || self.ts_on);
        s.ts = offer.then(|| Timestamps {
            val: Self::ts_clock(now),
            ecr: self.ts_recent,
        });
        s
    }

    /// A data segment or an ACK, built in the packet that carries it, `p`: filled where it
    /// lies rather than assembled apart and moved, since a move reads it back whole right
    /// after the narrower stores that built it, which the processor cannot forward.
    fn data_or_ack(&mut self, now: Time, p: &mut Packet) -> bool {
        let out = if std::mem::take(&mut self.handshake_ack_due) {
            None
        } else {
            self.sender.poll_segment(now)
        };
        if out.is_none() && !self.receiver.ack_pending() {
            return false;
        }
        if let Some(seq) = out.and_then(|o| o.resent()).filter(|_| self.detailed) {
            let timeout = !self.sender.in_recovery();
            self.events.push_back(Event::Retransmitted { seq, timeout });
        }
        let (flags, seq) = match out {
            Some(Outgoing::Data { seq, .. } | Outgoing::Probe { seq }) => (TcpFlags::ACK, seq),
            Some(Outgoing::Fin { seq, .. }) => (TcpFlags::ACK | TcpFlags::FIN, seq),
            None => (TcpFlags::ACK, self.sender.snd_max),
        };
        *p = Packet::tcp(self.local.addr, self.remote.addr, self.segment(flags, seq));
        let Body::Tcp(s) = &mut p.body else {
            unreachable!("built as a TCP packet")
        };
        if let Some(Outgoing::Data { len, .. }) = out {
            s.len = len;
            let srtt = self.sender.rtt.srtt().unwrap_or(Dur::ZERO);
            s.rap = self.sender.cc.request(srtt).map(Box::new);
        }
        let (ack, window) = self.receiver.fill_ack(&mut s.sack);
        if window == 0 {
            self.events.push_back(Event::ZeroWindowAck);
        }
        if self.ts_on {
            s.sack.truncate(MAX_SACK_BLOCKS_WITH_TIMESTAMPS);
            s.ts = Some(Timestamps {
                val: Self::ts_clock(now),
                ecr: self.ts_recent,
            });
        }
        self.last_ack_sent = ack;
        s.ack = ack;
        s.window = window;
        if s.len == 0 {
            s.rap = self.echo.take().map(Box::new);
        }
        true
    }

    fn segment(&self, flags: TcpFlags, seq: u64) -> TcpSegment {
        TcpSegment {
            src_port: self.local.port,
            dst_port: self.remote.port,
            seq,
            ack: 0,
            flags,
            window: 0,
            len: 0,
            syn_options: None,
            sack: SackList::default(),
            ts: None,
            rap: None,
            wscale: self.wire_shift,
        }
    }

    /// The earliest time at which `handle_timeout` has work to do.
    pub fn poll_timeout(&self) -> Option<Time> {
        match self.state {
            State::SynSent | State::SynReceived => self.syn_deadline,
            State::Aborted => None,
            _ => earliest(
                earliest(self.sender.poll_timeout(), self.receiver.ack_deadline()),
                self.time_wait_deadline,
            ),
        }
    }

    /// Runs expired timers. Calling it early is a harmless no-op.
    pub fn handle_timeout(&mut self, now: Time) {
        match self.state {
            State::SynSent | State::SynReceived => {
                if self.syn_deadline.is_some_and(|d| d <= now) {
                    self.syn_deadline = None;
                    if self.syn_sent > self.cfg.rto.syn_retries {
                        self.abort(false);
                    } else {
                        self.sender.rtt.on_timeout();
                        self.syn_due = true;
                    }
                }
            }
            State::Aborted => {}
            _ => {
                if self.time_wait_deadline.is_some_and(|d| d <= now) {
                    // RFC 9293 section 3.10.8: the 2 MSL wait is over.
                    self.time_wait_deadline = None;
                    self.set_state(State::Closed);
                }
                self.receiver.on_ack_timer(now);
                let expiry = self.sender.handle_timeout(now);
                self.on_expiry(expiry);
            }
        }
    }

    pub(super) fn on_expiry(&mut self, e: Expiry) {
        let ev = match e {
            Expiry::None => return,
            Expiry::Abort => return self.abort(true),
            Expiry::Ask => Event::WhatShouldTcpDo,
            Expiry::Timeout => Event::Timeout {
                count: self.sender.consecutive_timeouts,
            },
        };
        self.events.push_back(ev);
    }

    /// Its node's first-hop queue refused one of its packets (`LocalQueue::Cwr`).
    pub fn handle_local_congestion(&mut self, now: Time) {
        self.sender.on_local_congestion(now);
    }

    /// Router-assisted feedback obtained locally rather than from an ACK: a RAPPEP
    /// machine hands its traffic monitor's output to its own connections (seed 004
    /// section III-B).
    pub fn handle_feedback(&mut self, now: Time, fb: Feedback) {
        self.sender.cc.on_feedback(now, fb);
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    // ----- observation -----

    pub fn state(&self) -> State {
        self.state
    }
    pub fn local(&self) -> Endpoint {
        self.local
    }
    pub fn remote(&self) -> Endpoint {
        self.remote
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn sender(&self) -> &Sender {
        &self.sender
    }
    pub fn stats(&self) -> &SenderStats {
        self.sender.stats()
    }
    /// Payload bytes received in order from the peer.
    pub fn bytes_received(&self) -> u64 {
        self.receiver.bytes_received()
    }
    pub fn peer_finished(&self) -> bool {
        self.receiver.fin_received()
    }
    pub fn window_scale(&self) -> u8 {
        self.cfg.window_scale()
    }
}
