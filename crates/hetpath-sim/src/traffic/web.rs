//! A web browser's page loop, independent of the transport (seed 001 section IV: web
//! pages of Table I over TCP or SCTP). It decides which object to fetch on which channel
//! and hears when an object has arrived; the driver maps a channel to what carries it (a
//! TCP connection, `sim/web.rs`; or an SCTP stream, `sim/web_sctp.rs`).
//!
//! Per page (HTTP/1.1, RFC 2616): the main object on one channel; once it has arrived,
//! the in-line objects over up to `parallel` channels (section 8.1.4 limits a client to
//! two persistent connections per server), one object at a time per channel: requests
//! are not pipelined (section 8.1.2.2 allows it, but browsers shipped it off), so a
//! channel's next request waits for the previous reply. The page is complete when the
//! main object and every in-line object have arrived; the next page starts after the
//! think time drawn with it (or at once, `think = false`).
//!
//! Persistent channels (section 8.1) are numbered 0..parallel and live for the whole
//! flow; without persistence every object has a channel of its own, closed once the object
//! has arrived (HTTP/1.0).

use super::http::{PageStart, Pages};
use crate::rng::Rng;
use hetpath_proto::{Dur, Time};
use std::collections::BTreeSet;

/// How the browser fetches pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebConfig {
    /// Pages to fetch before the flow is done; `None` fetches until the run ends.
    pub pages: Option<u64>,
    /// HTTP/1.1 persistent connections (RFC 2616 section 8.1).
    pub persistent: bool,
    /// Channels (connections) per page for the in-line objects, at least 1.
    pub parallel: u32,
    /// Bytes of one request.
    pub request: u64,
    /// Wait the page's think time before the next page.
    pub think: bool,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            pages: None,
            persistent: true,
            parallel: 2,
            request: 300,
            think: true,
        }
    }
}

/// What the browser asks of its driver.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Page `page` starts now (counters of the page start here).
    PageStart { page: u64 },
    /// Send a request of `request` bytes on channel `chan`; the server answers with
    /// `reply` bytes. A channel not seen before is a new connection.
    Fetch { chan: u32, request: u64, reply: u64 },
    /// Channel `chan` carries nothing more: close it.
    Close { chan: u32 },
    /// Call `Browser::wake` at this time (the think time ends).
    WakeAt(Time),
    /// A page is complete.
    PageDone(PageDone),
}

/// A completed page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageDone {
    /// Its index, from 0.
    pub page: u64,
    /// When its first request was issued (a connection opened for it included) and when
    /// the last byte of its last object arrived.
    pub start: Time,
    pub end: Time,
    /// Objects (the main one and the in-line ones) and their bytes.
    pub objects: u64,
    pub bytes: u64,
}

/// The page being fetched. Its in-line objects are drawn one by one as they are
/// requested, so it holds counts, not a list.
#[derive(Debug)]
struct Current {
    page: u64,
    start: Time,
    drawn: PageStart,
    main_done: bool,
    /// In-line objects not yet requested (counted once the main object has arrived).
    pending: u64,
    /// Bytes of the objects requested so far.
    bytes: u64,
    in_flight: u32,
}

/// The browser.
#[derive(Debug)]
pub struct Browser {
    cfg: WebConfig,
    pages: Pages,
    rng: Rng,
    started: u64,
    completed: u64,
    current: Option<Current>,
    /// Channels with an object in flight.
    busy: BTreeSet<u32>,
    /// Persistent: how many channels were opened. Otherwise: the next channel's number.
    opened: u32,
    wake: Option<Time>,
}

impl Browser {
    /// `rng` is the flow's own stream (every page is drawn from it, in order).
    pub fn new(cfg: WebConfig, pages: Pages, rng: Rng) -> Browser {
        assert!(cfg.parallel >= 1, "at least one channel");
        Browser {
            cfg,
            pages,
            rng,
            started: 0,
            completed: 0,
            current: None,
            busy: BTreeSet::new(),
            opened: 0,
            wake: None,
        }
    }

    pub fn config(&self) -> &WebConfig {
        &self.cfg
    }

    /// Pages completed so far.
    pub fn completed(&self) -> u64 {
        self.completed
    }

    /// Every page asked for has been fetched.
    pub fn done(&self) -> bool {
        self.cfg.pages.is_some_and(|n| self.completed >= n)
    }

    /// The flow starts: the first page.
    pub fn start(&mut self, now: Time, out: &mut Vec<Action>) {
        self.begin_page(now, out);
    }

    /// The think time set by `WakeAt` may be over.
    pub fn wake(&mut self, now: Time, out: &mut Vec<Action>) {
        if self.wake.is_some_and(|t| t <= now) {
            self.wake = None;
            self.begin_page(now, out);
        }
    }

    /// The object in flight on `chan` has fully arrived.
    pub fn on_complete(&mut self, now: Time, chan: u32, out: &mut Vec<Action>) {
        if !self.busy.remove(&chan) {
            return;
        }
        if !self.cfg.persistent {
            out.push(Action::Close { chan });
        }
        let Some(cur) = &mut self.current else {
            return;
        };
        cur.in_flight -= 1;
        if !cur.main_done {
            cur.main_done = true;
            cur.pending = cur.drawn.inline_count;
        }
        self.dispatch(out);
        let cur = self.current.as_ref().expect("still fetching");
        if cur.pending == 0 && cur.in_flight == 0 {
            let cur = self.current.take().expect("checked");
            self.completed += 1;
            out.push(Action::PageDone(PageDone {
                page: cur.page,
                start: cur.start,
                end: now,
                objects: cur.drawn.inline_count.saturating_add(1),
                bytes: cur.bytes,
            }));
            // Drawn whether or not it is waited, as the page's last draw (`Pages`).
            let think = Dur::from_secs_f64(self.pages.think_time(&mut self.rng));
            if self.cfg.think && think > Dur::ZERO && !self.done() {
                let t = now + think;
                self.wake = Some(t);
                out.push(Action::WakeAt(t));
            } else {
                self.begin_page(now, out);
            }
        }
    }

    fn begin_page(&mut self, now: Time, out: &mut Vec<Action>) {
        if self.done() {
            if self.cfg.persistent {
                out.extend((0..self.opened).map(|chan| Action::Close { chan }));
                self.opened = 0;
            }
            return;
        }
        let drawn = self.pages.start(&mut self.rng);
        let page = self.started;
        self.started += 1;
        out.push(Action::PageStart { page });
        let main = drawn.main_size;
        self.current = Some(Current {
            page,
            start: now,
            drawn,
            main_done: false,
            pending: 0,
            bytes: main,
            in_flight: 0,
        });
        self.fetch(main, out);
    }

    /// Requests pending in-line objects while a channel is free, drawing each one's size
    /// as it is requested.
    fn dispatch(&mut self, out: &mut Vec<Action>) {
        loop {
            let cur = self.current.as_mut().expect("a page");
            if cur.in_flight >= self.cfg.parallel || cur.pending == 0 {
                return;
            }
            cur.pending -= 1;
            let size = self.pages.inline_size(&mut self.rng);
            cur.bytes = cur.bytes.saturating_add(size);
            self.fetch(size, out);
        }
    }

    fn fetch(&mut self, reply: u64, out: &mut Vec<Action>) {
        let chan = if self.cfg.persistent {
            let free = (0..self.cfg.parallel)
                .find(|c| !self.busy.contains(c))
                .expect("a free channel (in_flight < parallel)");
            self.opened = self.opened.max(free + 1);
            free
        } else {
            self.opened += 1;
            self.opened - 1
        };
        self.busy.insert(chan);
        self.current.as_mut().expect("a page").in_flight += 1;
        out.push(Action::Fetch {
            chan,
            request: self.cfg.request,
            reply,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;
    use crate::traffic::http::{Dist, HttpModel};

    fn browser(cfg: WebConfig, inline: f64) -> Browser {
        let c = |value| Dist::Constant { value };
        let model = HttpModel {
            main_size: c(1000.0),
            inline_count: c(inline),
            inline_size: c(500.0),
            think_time: c(2.0),
        };
        Browser::new(cfg, model.pages().unwrap(), stream(1, "t"))
    }

    fn fetches(out: &[Action]) -> Vec<u32> {
        out.iter()
            .filter_map(|a| match a {
                Action::Fetch { chan, .. } => Some(*chan),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn persistent_pages_reuse_two_channels_and_think_between() {
        let cfg = WebConfig {
            pages: Some(2),
            ..WebConfig::default()
        };
        let mut b = browser(cfg, 3.0);
        let mut out = Vec::new();
        let t = |s| Time::ZERO + Dur::from_secs(s);
        b.start(t(0), &mut out);
        assert_eq!(fetches(&out), [0]);
        out.clear();
        b.on_complete(t(1), 0, &mut out);
        assert_eq!(fetches(&out), [0, 1], "two in-line objects at once");
        out.clear();
        b.on_complete(t(2), 1, &mut out);
        assert_eq!(fetches(&out), [1], "the third on the freed channel");
        out.clear();
        b.on_complete(t(3), 0, &mut out);
        assert!(out.is_empty());
        b.on_complete(t(4), 1, &mut out);
        assert_eq!(
            out,
            [
                Action::PageDone(PageDone {
                    page: 0,
                    start: t(0),
                    end: t(4),
                    objects: 4,
                    bytes: 2500
                }),
                Action::WakeAt(t(6))
            ]
        );
        out.clear();
        b.wake(t(5), &mut out);
        assert!(out.is_empty(), "too early");
        b.wake(t(6), &mut out);
        assert_eq!(fetches(&out), [0]);
        assert!(!b.done());
        for (s, c) in [(7, 0), (8, 0), (8, 1), (9, 0)] {
            b.on_complete(t(s), c, &mut Vec::new());
        }
        assert!(b.done() && b.completed() == 2);
    }

    #[test]
    fn without_persistence_every_object_has_its_own_closed_channel() {
        let cfg = WebConfig {
            persistent: false,
            parallel: 1,
            think: false,
            ..WebConfig::default()
        };
        let mut b = browser(cfg, 2.0);
        let mut out = Vec::new();
        b.start(Time::ZERO, &mut out);
        b.on_complete(Time::ZERO, 0, &mut out);
        b.on_complete(Time::ZERO, 1, &mut out);
        b.on_complete(Time::ZERO, 2, &mut out);
        let closes = out
            .iter()
            .filter(|a| matches!(a, Action::Close { .. }))
            .count();
        assert_eq!(
            fetches(&out),
            [0, 1, 2, 3],
            "the next page's main object at once"
        );
        assert_eq!(closes, 3);
    }
}
