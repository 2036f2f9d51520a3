//! The metrics endpoint: `Metrics::render` to every HTTP request, whatever it asks.
//! One thread of its own (a slow scraper never stalls the relay), and within it a small
//! nonblocking loop, so that no client stalls another scrape either: each request has
//! `DEADLINE` from its accept to be read and answered, and at most `MAX_HELD` are held
//! at once (the oldest is closed to make room). Requests closed unanswered are counted.

use super::config::LogLevel;
use super::log::log;
use super::metrics::Metrics;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use slab::Slab;
use std::io::{self, Read, Write};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Requests held at once; counted in `nofile::OWN_DESCRIPTORS`.
pub const MAX_HELD: usize = 16;
/// From accept to the last byte of the answer.
const DEADLINE: Duration = Duration::from_secs(2);
/// The longest request head read.
const MAX_HEAD: usize = 8192;
/// The listener's token; a request's is its slot plus one.
const LISTENER: Token = Token(0);

struct Request {
    stream: TcpStream,
    deadline: Instant,
    head: Vec<u8>,
    /// The answer once the head is read, and how much of it is written.
    answer: Option<(Vec<u8>, usize)>,
}

/// Serves `render()` on `listener` until the process ends.
pub fn serve(listener: std::net::TcpListener, metrics: Arc<Metrics>) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let mut listener = TcpListener::from_std(listener);
    let poll = Poll::new()?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    std::thread::Builder::new()
        .name("pep-metrics".into())
        .spawn(move || {
            if let Err(e) = run(poll, listener, &metrics) {
                log(LogLevel::Error, format_args!("metrics endpoint: {e}"));
            }
        })?;
    Ok(())
}

fn run(mut poll: Poll, listener: TcpListener, m: &Metrics) -> io::Result<()> {
    let mut held: Slab<Request> = Slab::with_capacity(MAX_HELD);
    let mut events = Events::with_capacity(64);
    loop {
        let now = Instant::now();
        let wait = held
            .iter()
            .map(|(_, r)| r.deadline.saturating_duration_since(now))
            .min();
        if let Err(e) = poll.poll(&mut events, wait) {
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        for ev in events.iter() {
            match ev.token() {
                LISTENER => accept_all(&poll, &listener, &mut held, m),
                Token(t) => {
                    let key = t - 1;
                    if step(&mut held, key, m) {
                        close(&poll, &mut held, key);
                    }
                }
            }
        }
        let now = Instant::now();
        let late: Vec<usize> = held
            .iter()
            .filter(|(_, r)| r.deadline <= now)
            .map(|(k, _)| k)
            .collect();
        for key in late {
            m.scrapes_dropped.fetch_add(1, Relaxed);
            close(&poll, &mut held, key);
        }
    }
}

fn accept_all(poll: &Poll, listener: &TcpListener, held: &mut Slab<Request>, m: &Metrics) {
    loop {
        let mut stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return, // WouldBlock, or out of descriptors: the next edge retries
        };
        if held.len() >= MAX_HELD {
            let oldest = held.iter().min_by_key(|(_, r)| r.deadline).map(|(k, _)| k);
            if let Some(k) = oldest {
                m.scrapes_dropped.fetch_add(1, Relaxed);
                close(poll, held, k);
            }
        }
        let entry = held.vacant_entry();
        let both = Interest::READABLE | Interest::WRITABLE;
        if poll
            .registry()
            .register(&mut stream, Token(entry.key() + 1), both)
            .is_err()
        {
            m.scrapes_dropped.fetch_add(1, Relaxed);
            continue;
        }
        entry.insert(Request {
            stream,
            deadline: Instant::now() + DEADLINE,
            head: Vec::new(),
            answer: None,
        });
    }
}

/// Reads the head, then writes the answer, as far as the socket goes; true when the
/// request is finished (answered, or failed).
fn step(held: &mut Slab<Request>, key: usize, m: &Metrics) -> bool {
    let Some(r) = held.get_mut(key) else {
        return false;
    };
    let mut buf = [0u8; 1024];
    while r.answer.is_none() {
        let complete = r.head.len() >= MAX_HEAD || r.head.windows(4).any(|w| w == b"\r\n\r\n");
        if complete {
            let body = m.render();
            let text = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            r.answer = Some((text.into_bytes(), 0));
            break;
        }
        match r.stream.read(&mut buf) {
            Ok(0) => {
                // The client ended its request without a blank line: answer it anyway.
                r.head.extend_from_slice(b"\r\n\r\n");
            }
            Ok(n) => r.head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => {
                m.scrapes_dropped.fetch_add(1, Relaxed);
                return true;
            }
        }
    }
    let Some((text, done)) = &mut r.answer else {
        return false;
    };
    while *done < text.len() {
        match r.stream.write(&text[*done..]) {
            Ok(n) => *done += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => {
                m.scrapes_dropped.fetch_add(1, Relaxed);
                return true;
            }
        }
    }
    true
}

fn close(poll: &Poll, held: &mut Slab<Request>, key: usize) {
    if let Some(mut r) = held.try_remove(key) {
        let _ = poll.registry().deregister(&mut r.stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, TcpStream as StdStream};

    fn scrape(addr: std::net::SocketAddr) -> String {
        let mut s = StdStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn a_slow_client_does_not_delay_another_scrape() {
        let l = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let addr = l.local_addr().unwrap();
        let m = Metrics::new();
        serve(l, m.clone()).unwrap();
        // A client that sends one byte of its request and then nothing.
        let mut slow = StdStream::connect(addr).unwrap();
        slow.write_all(b"G").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let t = Instant::now();
        let text = scrape(addr);
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        assert!(
            text.starts_with("HTTP/1.1 200 OK")
                && text.contains("hetpath_pep_connections_active 0")
        );
        // The slow one is closed at its deadline, unanswered, and counted.
        slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut rest = Vec::new();
        let _ = slow.read_to_end(&mut rest);
        assert!(rest.is_empty());
        assert_eq!(m.scrapes_dropped.load(Relaxed), 1);
    }
}
