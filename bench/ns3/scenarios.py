#!/usr/bin/env python3
"""ns-3 side of the hetpath cross-check benchmark.

Builds one of the benchmark scenarios in ns-3 (through the official ``ns3`` Python
bindings, which are cppyy over the compiled C++ libraries), runs it, and prints per flow
the bytes the sink application received and the goodput, plus the wall-clock time of
``Simulator::Run()`` and the number of events ns-3 executed
(``Simulator::GetEventCount()``).

    python bench/ns3/scenarios.py NAME [--seed N] [--json] [options]

NAME is one of ``geo-clean``, ``geo-loss``, ``sat-shared``, ``ge-radio``, ``dumbbell`` (see ``--help`` and
bench/ns3/README.md). Run it with the interpreter of the ns-3 virtualenv
(target/ns3-venv/bin/python, which bench/compare_ns3.py creates; see bench/requirements-ns3.txt); the script does not import
anything from the hetpath repository.

Only the time spent inside ``Simulator::Run()`` is reported as ``wall_time_s``: importing
the bindings (cppyy parses the ns-3 headers, about 10 s) and building the topology are
not counted.

TCP settings: ns-3's own defaults (ns-3.44, read with TypeId::LookupAttributeByName), which
hetpath's ``[tcp] profile = "ns3"`` reproduces; only what is a property of the scenario,
not of the TCP stack, is set (``Config::SetDefault`` before any node exists):

=========================  =====================================================  =====================
setting (CLI option)       ns-3 attribute                                          value by default
=========================  =====================================================  =====================
MSS (--segment-size)       ns3::TcpSocket::SegmentSize                             1448 with timestamps
                                                                                   (ns-3 adds the 12 option
                                                                                   bytes on top: 1500-byte
                                                                                   IP packets, as hetpath's
                                                                                   mss 1460), else 1460
buffers (--buffer)         ns3::TcpSocket::SndBufSize, RcvBufSize                  16 MiB (hetpath's default;
                                                                                   ns-3's is 128 KiB)
Hybla RTT0 (--hybla-rtt0)  ns3::TcpHybla::RRTT                                     25 ms (hetpath; ns-3: 50)
IW (--initial-cwnd)        ns3::TcpSocket::InitialCwnd (in segments)               10 (ns-3 default)
delayed ACK                ns3::TcpSocket::DelAckCount, DelAckTimeout              2, 200 ms (ns-3 default)
min RTO (--min-rto)        ns3::TcpSocketBase::MinRto                              1 s (ns-3 default)
SYN timer (--conn-timeout) ns3::TcpSocket::ConnTimeout                             3 s (ns-3 default)
first data RTO             ns3::RttEstimator::InitialEstimation (--initial-rtt)    1 s (ns-3 default)
SYN / data retries         ns3::TcpSocket::ConnCount / DataRetries                 6 / 6 (ns-3 defaults)
SACK (--no-sack)           ns3::TcpSocketBase::Sack                                true (ns-3 default)
timestamps                 ns3::TcpSocketBase::Timestamp (--no-timestamps)         true (ns-3 default)
window scaling             ns3::TcpSocketBase::WindowScaling                       true (ns-3 default)
recovery (--recovery)      ns3::TcpL4Protocol::RecoveryType                        TcpPrrRecovery (default)
CUBIC HyStart              ns3::TcpCubic::HyStart (--no-cubic-hystart)             true (ns-3 default)
pacing                     ns3::TcpSocketState::EnablePacing                       false (ns-3 default)
dupthresh, lim. transmit   ns3::TcpSocketBase::ReTxThreshold, LimitedTransmit      3, true (ns-3 defaults)
ECN, Nagle                 UseEcn, TcpNoDelay                                      Off, true (ns-3 defaults)
=========================  =====================================================  =====================

Window growth ("ABC"): ns-3 has no Appropriate Byte Counting switch. TcpSocketBase hands
the congestion control the number of segments an ACK newly acknowledged
(``segmentsAcked``) and each class decides what to do with it:

* ns3::TcpNewReno (and TcpHybla, TcpWestwoodPlus, which inherit its growth): slow start
  adds ONE segment per ACK that acknowledges new data whatever ``segmentsAcked`` is (no
  ABC: with DelAckCount 2 the window grows by 1.5x per RTT, not 2x); congestion
  avoidance adds MSS*MSS/cwnd per ACK. Only the segments left over when slow start
  crosses ssthresh are carried into congestion avoidance.
* ns3::TcpLinuxReno: slow start adds ``segmentsAcked`` segments per ACK (capped at
  ssthresh, i.e. ABC with no limit L), congestion avoidance counts acknowledged segments
  (Linux ``tcp_cong_avoid_ai``): one MSS per cwnd segments acknowledged.
* ns3::TcpCubic: slow start adds ``segmentsAcked`` segments per ACK; congestion avoidance
  follows the cubic function with ``segmentsAcked`` counted (Linux ``bictcp_cong_avoid``).

Controller names follow hetpath's: reno, newreno, westwood+, cubic, hybla (tahoe has no
ns-3 class). ns-3 has one loss-recovery machine in TcpSocketBase, shared by every
congestion control: fast retransmit on ReTxThreshold duplicate ACKs (or RFC 6675 loss
marking when SACK is on), NewReno partial-ACK handling (recovery ends only when the ACK
covers the recovery point, RFC 6582), and a SACK scoreboard from which the pipe
(BytesInFlight, RFC 6675) is computed. The RecoveryOps object only sets cwnd during
recovery: TcpClassicRecovery sets cwnd = ssthresh on entry and sends while pipe < cwnd
(RFC 6675-like with SACK), TcpPrrRecovery is RFC 6937 PRR (the ns-3 default). So:

* "newreno" -> ns3::TcpNewReno: ns-3's classic Reno-family controller, with ns-3's
  NewReno recovery.
* "reno"    -> ns3::TcpLinuxReno by default (--reno-class): same ssthresh/cwnd rule on
  loss as NewReno but Linux-style segment counting. Pure RFC 5681 Reno recovery (leave
  recovery on the first new ACK) does not exist in ns-3: it would need a change to
  TcpSocketBase, not just another RecoveryType.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

# ---------------------------------------------------------------------------------------
# Scenario definitions (pure data; the ns-3 building is below).

# hetpath controller name -> ns-3 TypeId. "reno" and "newreno" can be remapped from the
# command line (--reno-class, --newreno-class).
CC_CLASSES = {
    "reno": "ns3::TcpLinuxReno",
    "newreno": "ns3::TcpNewReno",
    "westwood+": "ns3::TcpWestwoodPlus",
    "cubic": "ns3::TcpCubic",
    "hybla": "ns3::TcpHybla",
}
CC_ALIASES = {"westwood": "westwood+", "westwoodplus": "westwood+", "linuxreno": "reno"}
UNSUPPORTED_CC = {"tahoe": "ns-3 has no Tahoe congestion control (no go-back-N recovery either)"}

SCENARIOS = {
    "geo-clean": {
        "topology": "p2p",
        "description": "2 nodes, one 10 Mbit/s point-to-point link, 300 ms one way, "
        "DropTail 100 packets at the sender's device, one NewReno bulk flow, 200 s",
        "rate": "10Mbps",
        "delay_ms": 300.0,
        "queue_packets": 100,
        "loss": 0.0,
        "duration_s": 200.0,
        "flows": ["newreno"],
    },
    "geo-loss": {
        "topology": "p2p",
        "description": "geo-clean plus 1% i.i.d. packet loss on the data direction "
        "(RateErrorModel, ERROR_UNIT_PACKET, on the receiver's device); one bulk flow per "
        "controller (reno, newreno, westwood+, cubic, hybla; no tahoe in ns-3), all from "
        "t=0 sharing the link, 200 s",
        "rate": "10Mbps",
        "delay_ms": 300.0,
        "queue_packets": 100,
        "loss": 0.01,
        "duration_s": 200.0,
        "flows": ["reno", "newreno", "westwood+", "cubic", "hybla"],
    },
    "sat-shared": {
        "topology": "p2p",
        "description": "the GEO hop of geo-clean shared by 5 CUBIC bulk flows with 0.5% i.i.d. "
        "packet loss on the data direction (RateErrorModel on the receiver's device), 200 s "
        "(bench/ns3/sat-shared.toml)",
        "rate": "10Mbps",
        "delay_ms": 300.0,
        "queue_packets": 100,
        "loss": 0.005,
        "duration_s": 200.0,
        "flows": ["cubic"] * 5,
        "names": [f"c{i}" for i in range(5)],
    },
    "ge-radio": {
        "topology": "p2p",
        "description": "a 5 Mbit/s, 40 ms one-way radio link with a 50-packet DropTail queue and "
        "a Gilbert-Elliott channel on the data direction (continuous-time two-state chain, "
        "mean good 2 s, mean bad 100 ms; a packet is lost with probability 0.5 if the chain is "
        "bad when its last bit arrives, 0.001 if good), one CUBIC bulk flow, 60 s. The indices "
        "of the lost packets are recorded (--loss-out) for hetpath's trace channel "
        "(bench/ns3/ge-radio.toml)",
        "rate": "5Mbps",
        "delay_ms": 40.0,
        "queue_packets": 50,
        "loss": 0.0,
        "ge": {"t_good_s": 2.0, "t_bad_s": 0.1, "loss_good": 0.001, "loss_bad": 0.5},
        "duration_s": 60.0,
        "flows": ["cubic"],
    },
    "dumbbell": {
        "topology": "dumbbell",
        "description": "10 CUBIC bulk flows, each from its own sender to its own receiver, "
        "access links 1 Gbit/s 1 ms, bottleneck 100 Mbit/s 50 ms one way with a DropTail "
        "queue of one BDP (100 Mbit/s * 100 ms = 1.25 MB = 833 packets of 1500 B), "
        "all flows start at t=0, 60 s",
        "rate": "100Mbps",
        "delay_ms": 50.0,
        "queue_packets": 833,
        "access_rate": "1Gbps",
        "access_delay_ms": 1.0,
        "loss": 0.0,
        "duration_s": 60.0,
        "flows": ["cubic"] * 10,
    },
}

BASE_PORT = 5000


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="Run a hetpath cross-check scenario in ns-3.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("scenario", metavar="NAME", choices=sorted(SCENARIOS), help="scenario: " + ", ".join(sorted(SCENARIOS)))
    p.add_argument("--seed", type=int, default=1, help="run number: ns3::RngSeedManager::SetRun(N), seed fixed at 1")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    g = p.add_argument_group("scenario overrides")
    g.add_argument("--duration", type=float, default=None, help="simulated seconds (default: the scenario's)")
    g.add_argument(
        "--cc",
        default=None,
        help="comma-separated controllers, one flow each (geo-*), or one controller for all dumbbell flows",
    )
    g.add_argument("--flows", type=int, default=None, help="dumbbell: number of flows (default 10)")
    g.add_argument("--loss", type=float, default=None, help="geo-*: packet loss rate on the data direction")
    g.add_argument("--queue", type=int, default=None, help="bottleneck DropTail size in packets")
    g.add_argument(
        "--access-queue",
        type=int,
        default=1000,
        help="dumbbell: DropTail size (packets) of the 1 Gbit/s access-link devices (as in "
        "scenarios/examples/dumbbell.toml)",
    )
    g.add_argument(
        "--stagger",
        type=float,
        default=0.0,
        help="dumbbell: start flows at uniform random times in [0, S] s drawn from the seed (0: all at t=0)",
    )
    t = p.add_argument_group("TCP settings (ns-3 attribute defaults)")
    t.add_argument(
        "--segment-size",
        type=int,
        default=None,
        help="ns3::TcpSocket::SegmentSize (payload bytes; default 1448 with timestamps, 1460 without, "
        "so that a full segment is a 1500-byte IP packet as in hetpath with mss = 1460)",
    )
    t.add_argument("--initial-cwnd", type=int, default=10, help="ns3::TcpSocket::InitialCwnd (segments)")
    t.add_argument("--delack-count", type=int, default=2, help="ns3::TcpSocket::DelAckCount")
    t.add_argument("--delack-timeout", type=float, default=0.2, help="ns3::TcpSocket::DelAckTimeout (s)")
    t.add_argument("--min-rto", type=float, default=1.0, help="ns3::TcpSocketBase::MinRto (s)")
    t.add_argument("--conn-timeout", type=float, default=3.0, help="ns3::TcpSocket::ConnTimeout (s): the SYN timer")
    t.add_argument(
        "--initial-rtt",
        type=float,
        default=1.0,
        help="ns3::RttEstimator::InitialEstimation (s): data RTO before the first RTT sample",
    )
    t.add_argument("--data-retries", type=int, default=6, help="ns3::TcpSocket::DataRetries")
    t.add_argument("--no-sack", dest="sack", action="store_false", help="ns3::TcpSocketBase::Sack false")
    t.add_argument("--no-timestamps", dest="timestamps", action="store_false", help="ns3::TcpSocketBase::Timestamp false")
    t.add_argument("--no-window-scaling", dest="window_scaling", action="store_false", help="WindowScaling false")
    t.add_argument("--buffer", type=int, default=16 << 20, help="ns3::TcpSocket::SndBufSize and RcvBufSize (bytes)")
    t.add_argument(
        "--recovery",
        choices=["classic", "prr"],
        default="prr",
        help="ns3::TcpL4Protocol::RecoveryType: TcpClassicRecovery or TcpPrrRecovery",
    )
    t.add_argument("--no-cubic-hystart", dest="cubic_hystart", action="store_false", help="ns3::TcpCubic::HyStart false")
    t.add_argument("--hybla-rtt0", type=float, default=0.025, help="ns3::TcpHybla::RRTT (s); ns-3's default is 0.05")
    t.add_argument(
        "--hybla-rho-every-ack",
        action="store_true",
        help="hybla: use a subclass of ns3::TcpHybla that recomputes rho from the minimum RTT on every ACK "
        "(stock ns-3 keeps rho = 1 on these paths, see README)",
    )
    t.add_argument("--reno-class", default=CC_CLASSES["reno"], help="ns-3 TypeId used for 'reno'")
    t.add_argument("--newreno-class", default=CC_CLASSES["newreno"], help="ns-3 TypeId used for 'newreno'")
    g.add_argument(
        "--loss-out",
        metavar="FILE",
        default=None,
        help="ge-radio: write the 0-based indices of the packets the channel lost on the data "
        "direction (hetpath trace-channel format) here",
    )
    d = p.add_argument_group("debugging")
    d.add_argument("--trace", metavar="FILE", default=None, help="write cwnd/ssthresh/RTO/RTT changes of every sender here")
    return p.parse_args(argv)


def resolve_flows(args, sc):
    """The list of controller names, one per flow, or exit with a message."""
    if args.cc is None:
        names = list(sc["flows"])
        if sc["topology"] == "dumbbell" and args.flows is not None:
            names = [names[0]] * args.flows
    else:
        names = [c.strip().lower() for c in args.cc.split(",") if c.strip()]
        if sc["topology"] == "dumbbell" and len(names) == 1:
            # one controller for all flows; several: one flow each, in order
            names = names * (args.flows if args.flows is not None else len(sc["flows"]))
    out = []
    for n in names:
        n = CC_ALIASES.get(n, n)
        if n in UNSUPPORTED_CC:
            print(f"skipping controller {n!r}: {UNSUPPORTED_CC[n]}", file=sys.stderr)
            continue
        if n not in CC_CLASSES:
            sys.exit(f"unknown controller {n!r}; known: {', '.join(CC_CLASSES)}")
        out.append(n)
    if not out:
        sys.exit("no flow left to simulate")
    return out


# ---------------------------------------------------------------------------------------
# ns-3 import (with cppyy's start-up noise filtered) and the C++ helpers.

# cppyy 3.x prints these harmless lines when cling runs ns-3's static initialisers; see
# wlav/cppyy issue 156. They are not errors of this script.
_CPPYY_NOISE = ("[runStaticInitializersOnce]: Failed to materialize symbols",)

_HELPERS = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/applications-module.h"
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

namespace hpbench {
using namespace ns3;

static std::ofstream g_trace;

void TraceU32(std::string ctx, uint32_t, uint32_t v)
{
    g_trace << Simulator::Now().GetNanoSeconds() << ' ' << ctx << ' ' << v << '\n';
}
void TraceTime(std::string ctx, Time, Time v)
{
    g_trace << Simulator::Now().GetNanoSeconds() << ' ' << ctx << ' ' << v.GetNanoSeconds() << '\n';
}

// Opt-in (--hybla-rho-every-ack): stock ns3::TcpHybla recomputes rho only in
// PktsAcked when the ACK's RTT sample equals tcb->m_minRtt. The handshake's sample (two
// small packets) sets m_minRtt below every data sample (full-size serialisation, delayed
// ACK), so on these paths rho stays at its initial 1.0 and Hybla grows like NewReno.
// This subclass hands m_minRtt in as the sample, so rho = max(minRtt/RRTT, 1) on every
// ACK, as the paper and Linux intend (congestion avoidance then adds rho^2/cwnd per
// segment acked, TcpHybla's own code). Stock slow start adds (2^rho - 1) MSS per ACK
// computed in uint32_t, which overflows for rho >= ~21.5 (GEO: rho = 24) and wraps cwnd
// around; this one caps the exponent at 16 as Linux tcp_hybla.c does and adds in 64 bits,
// clamped to ssthresh.
class HyblaRhoEveryAck : public TcpHybla
{
  public:
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time&) override
    {
        TcpHybla::PktsAcked(tcb, segmentsAcked, tcb->m_minRtt);
    }

  protected:
    uint32_t SlowStart(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (segmentsAcked < 1)
        {
            return 0;
        }
        TimeValue rrtt;
        GetAttribute("RRTT", rrtt);
        double rho = std::max(static_cast<double>(tcb->m_minRtt.GetMilliSeconds()) /
                                  static_cast<double>(rrtt.Get().GetMilliSeconds()),
                              1.0);
        double increment = std::pow(2.0, std::min(rho, 16.0)) - 1.0;
        uint64_t cwnd = static_cast<uint64_t>(tcb->m_cWnd.Get()) +
                        static_cast<uint64_t>(increment * tcb->m_segmentSize);
        tcb->m_cWnd = static_cast<uint32_t>(std::min<uint64_t>(cwnd, tcb->m_ssThresh.Get()));
        return segmentsAcked - 1;
    }
};

// Runs right after the BulkSendApplication created and connected its socket: replaces
// the socket's congestion control (ns-3 chooses it per node through
// TcpL4Protocol::SocketType, and BulkSendApplication cannot be handed a socket) and
// hooks the optional traces.
void SetupSender(Ptr<Application> app, std::string ccTid, std::string name, bool trace)
{
    Ptr<BulkSendApplication> bulk = DynamicCast<BulkSendApplication>(app);
    NS_ABORT_MSG_IF(!bulk, "not a BulkSendApplication");
    Ptr<TcpSocketBase> sock = DynamicCast<TcpSocketBase>(bulk->GetSocket());
    NS_ABORT_MSG_IF(!sock, "BulkSendApplication has no TCP socket yet");
    if (!ccTid.empty())
    {
        if (ccTid == "hpbench::HyblaRhoEveryAck")
        {
            sock->SetCongestionControlAlgorithm(CreateObject<HyblaRhoEveryAck>());
        }
        else
        {
            ObjectFactory f;
            f.SetTypeId(ccTid);
            sock->SetCongestionControlAlgorithm(f.Create<TcpCongestionOps>());
        }
    }
    if (trace)
    {
        sock->TraceConnect("CongestionWindow", name + " cwnd", MakeCallback(&TraceU32));
        sock->TraceConnect("SlowStartThreshold", name + " ssthresh", MakeCallback(&TraceU32));
        sock->TraceConnect("RTO", name + " rto_ns", MakeCallback(&TraceTime));
        sock->TraceConnect("RTT", name + " srtt_ns", MakeCallback(&TraceTime));
    }
}

void ScheduleSetupSender(Ptr<Application> app, Time at, std::string ccTid, std::string name, bool trace)
{
    Simulator::Schedule(at, &SetupSender, app, ccTid, name, trace);
}

// A Gilbert-Elliott channel (ns-3 has none built in; BurstErrorModel has no two-state
// chain): a continuous-time two-state Markov chain with exponential sojourns of means
// tGood and tBad, started in its stationary law at t = 0 and advanced lazily to the
// instant each packet's last bit arrives; the packet is lost with probability lossBad in
// the bad state, lossGood in the good state. Every packet judged is counted from 0, and
// the indices of the lost ones are kept (Lost()), so that hetpath can replay the same
// losses through its trace channel. Random draws come from ns-3's own streams.
class GilbertElliott : public ErrorModel
{
  public:
    GilbertElliott(double tGood, double tBad, double lossGood, double lossBad, int64_t stream)
        : m_tGood(tGood), m_tBad(tBad), m_lossGood(lossGood), m_lossBad(lossBad)
    {
        m_u = CreateObject<UniformRandomVariable>();
        m_u->SetStream(stream);
        m_bad = m_u->GetValue() < tBad / (tGood + tBad);
        m_until = Exp(m_bad ? m_tBad : m_tGood);
    }
    std::vector<uint64_t> Lost() const { return m_lost; }
    uint64_t Seen() const { return m_seen; }

  private:
    double Exp(double mean) { return -mean * std::log(1.0 - m_u->GetValue()); }
    bool DoCorrupt(Ptr<Packet>) override
    {
        double now = Simulator::Now().GetSeconds();
        while (m_until <= now)
        {
            m_bad = !m_bad;
            m_until += Exp(m_bad ? m_tBad : m_tGood);
        }
        bool lost = m_u->GetValue() < (m_bad ? m_lossBad : m_lossGood);
        if (lost)
        {
            m_lost.push_back(m_seen);
        }
        m_seen++;
        return lost;
    }
    void DoReset() override {}

    double m_tGood, m_tBad, m_lossGood, m_lossBad;
    Ptr<UniformRandomVariable> m_u;
    bool m_bad{false};
    double m_until{0};
    uint64_t m_seen{0};
    std::vector<uint64_t> m_lost;
};

Ptr<GilbertElliott> MakeGilbertElliott(double tGood, double tBad, double lossGood, double lossBad, int64_t stream)
{
    return CreateObject<GilbertElliott>(tGood, tBad, lossGood, lossBad, stream);
}

void OpenTrace(std::string path) { g_trace.open(path); }
void CloseTrace() { g_trace.close(); }

} // namespace hpbench
"""


def import_ns3():
    """Import the bindings and compile the helpers, keeping cppyy's noise off stderr."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            from ns import ns  # noqa: F401  (slow: cppyy parses the ns-3 headers)
            import cppyy

            cppyy.cppdef(_HELPERS)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            for line in tmp.read().decode(errors="replace").splitlines():
                if line.strip() and not line.startswith(_CPPYY_NOISE):
                    print(line, file=sys.stderr)
    return ns, cppyy.gbl.hpbench


def ns3_version():
    try:
        from importlib.metadata import version

        pip_version = version("ns3")
    except Exception:  # pragma: no cover - only without package metadata
        pip_version = None
    release = pip_version.split(".post")[0] if pip_version else None
    return release, pip_version


# ---------------------------------------------------------------------------------------
# Building and running.


def configure_tcp(ns, args):
    S = ns.StringValue
    d = ns.Config.SetDefault
    if args.segment_size is None:
        # ns-3 adds the 12 option bytes of timestamps on top of SegmentSize (TcpSocketBase does
        # not subtract them as Linux's tcp_current_mss does); 1448 keeps a full segment a
        # 1500-byte IP packet, which is what hetpath sends with mss = 1460 and timestamps.
        args.segment_size = 1448 if args.timestamps else 1460
    d("ns3::TcpSocket::SegmentSize", ns.UintegerValue(args.segment_size))
    d("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(args.initial_cwnd))
    d("ns3::TcpSocket::DelAckCount", ns.UintegerValue(args.delack_count))
    d("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.Seconds(args.delack_timeout)))
    d("ns3::TcpSocket::SndBufSize", ns.UintegerValue(args.buffer))
    d("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(args.buffer))
    d("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(args.conn_timeout)))
    d("ns3::TcpSocket::DataRetries", ns.UintegerValue(args.data_retries))
    d("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
    d("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(args.min_rto)))
    d("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    d("ns3::RttEstimator::InitialEstimation", ns.TimeValue(ns.Seconds(args.initial_rtt)))
    d("ns3::TcpSocketBase::Sack", ns.BooleanValue(args.sack))
    d("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(args.timestamps))
    d("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(args.window_scaling))
    d("ns3::TcpSocketBase::UseEcn", S("Off"))
    d("ns3::TcpSocketBase::ReTxThreshold", ns.UintegerValue(3))
    d("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(True))
    d("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(False))
    recovery = {"classic": "ns3::TcpClassicRecovery", "prr": "ns3::TcpPrrRecovery"}[args.recovery]
    d("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName(recovery)))
    d("ns3::TcpCubic::HyStart", ns.BooleanValue(args.cubic_hystart))
    d("ns3::TcpHybla::RRTT", ns.TimeValue(ns.Seconds(args.hybla_rtt0)))
    # Every bulk sender writes 1460-byte chunks: one segment per Send() call.
    d("ns3::BulkSendApplication::SendSize", ns.UintegerValue(args.segment_size))
    return recovery


def p2p_helper(ns, rate, delay_ms, queue_packets):
    h = ns.PointToPointHelper()
    h.SetDeviceAttribute("DataRate", ns.StringValue(rate))
    h.SetDeviceAttribute("Mtu", ns.UintegerValue(1500))
    h.SetChannelAttribute("Delay", ns.TimeValue(ns.MicroSeconds(int(round(delay_ms * 1000)))))
    h.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue(f"{queue_packets}p"))
    return h


def assign(ns, devices, base):
    a = ns.Ipv4AddressHelper()
    a.SetBase(ns.Ipv4Address(base), ns.Ipv4Mask("255.255.255.0"))
    ifaces = a.Assign(devices)
    # Ipv4AddressHelper::Assign installs the default queue disc (FqCoDel in recent ns-3)
    # on every device that has none; remove it so packets go straight to the device's
    # DropTail TX queue, the only queue in the path.
    ns.TrafficControlHelper().Uninstall(devices)
    return ifaces


def build_p2p(ns, helpers, sc, args):
    nodes = ns.NodeContainer()
    nodes.Create(2)
    queue = args.queue if args.queue is not None else sc["queue_packets"]
    devices = p2p_helper(ns, sc["rate"], sc["delay_ms"], queue).Install(nodes)
    ns.InternetStackHelper().Install(nodes)
    ifaces = assign(ns, devices, "10.1.1.0")
    loss = args.loss if args.loss is not None else sc["loss"]
    keep = []
    info = {"queue_packets": queue, "loss": loss}
    if loss > 0:
        em = ns.CreateObject[ns.RateErrorModel]()
        em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
        em.SetAttribute("ErrorRate", ns.DoubleValue(loss))
        em.AssignStreams(1000)
        # Receiver's device only: data packets are dropped, ACKs (the other direction) never.
        devices.Get(1).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
        keep.append(em)
    ge = sc.get("ge")
    if ge:
        em = helpers.MakeGilbertElliott(ge["t_good_s"], ge["t_bad_s"], ge["loss_good"], ge["loss_bad"], 3000)
        devices.Get(1).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
        keep.append(em)
        info["ge"] = dict(ge)
        info["ge_model"] = em
    n = len(args.flow_ccs)
    pairs = [(nodes.Get(0), nodes.Get(1), ifaces.GetAddress(1)) for _ in range(n)]
    return pairs, keep + [nodes, devices, ifaces], info


def build_dumbbell(ns, sc, args):
    n = len(args.flow_ccs)
    senders, receivers, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(n)
    receivers.Create(n)
    routers.Create(2)
    stack = ns.InternetStackHelper()
    for c in (senders, receivers, routers):
        stack.Install(c)
    queue = args.queue if args.queue is not None else sc["queue_packets"]
    access = p2p_helper(ns, sc["access_rate"], sc["access_delay_ms"], args.access_queue)
    bottleneck = p2p_helper(ns, sc["rate"], sc["delay_ms"], queue)
    keep = [senders, receivers, routers]
    pairs = []
    for i in range(n):
        left = access.Install(senders.Get(i), routers.Get(0))
        assign(ns, left, f"10.1.{i + 1}.0")
        right = access.Install(routers.Get(1), receivers.Get(i))
        rif = assign(ns, right, f"10.2.{i + 1}.0")
        keep += [left, right, rif]
        pairs.append((senders.Get(i), receivers.Get(i), rif.GetAddress(1)))
    core = bottleneck.Install(routers.Get(0), routers.Get(1))
    keep += [core, assign(ns, core, "10.3.1.0")]
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    info = {"queue_packets": queue, "access_queue_packets": args.access_queue}
    return pairs, keep, info


def run(args):
    sc = SCENARIOS[args.scenario]
    args.flow_ccs = resolve_flows(args, sc)
    cc_classes = dict(CC_CLASSES, reno=args.reno_class, newreno=args.newreno_class)
    if args.hybla_rho_every_ack:
        cc_classes["hybla"] = "hpbench::HyblaRhoEveryAck"  # not a registered TypeId: per socket only
    duration = args.duration if args.duration is not None else sc["duration_s"]

    ns, helpers = import_ns3()
    release, pip_version = ns3_version()

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(args.seed)
    recovery = configure_tcp(ns, args)
    distinct = sorted(set(args.flow_ccs))
    # One controller for all flows: the ordinary ns-3 way (per-node TcpL4Protocol default).
    # Several on one node (or the Hybla subclass, which has no TypeId of its own): each
    # sender's socket gets its own, see SetupSender.
    per_socket_cc = len(distinct) > 1 or cc_classes[args.flow_ccs[0]].startswith("hpbench::")
    if not per_socket_cc:
        ns.Config.SetDefault(
            "ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(cc_classes[args.flow_ccs[0]]))
        )

    if sc["topology"] == "p2p":
        pairs, keep, topo_info = build_p2p(ns, helpers, sc, args)
    else:
        pairs, keep, topo_info = build_dumbbell(ns, sc, args)

    starts = [0.0] * len(pairs)
    if sc["topology"] == "dumbbell" and args.stagger > 0:
        rv = ns.CreateObject[ns.UniformRandomVariable]()
        rv.SetAttribute("Min", ns.DoubleValue(0.0))
        rv.SetAttribute("Max", ns.DoubleValue(args.stagger))
        rv.SetStream(2000)
        starts = [rv.GetValue() for _ in pairs]
        keep.append(rv)

    if args.trace:
        helpers.OpenTrace(args.trace)

    flows = []
    for i, ((src, dst, dst_addr), cc) in enumerate(zip(pairs, args.flow_ccs)):
        port = BASE_PORT + i
        sink_helper = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sink_apps = sink_helper.Install(dst)
        sink_apps.Start(ns.Seconds(0.0))
        sink_apps.Stop(ns.Seconds(duration))
        bulk_helper = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(dst_addr, port).ConvertTo())
        bulk_helper.SetAttribute("MaxBytes", ns.UintegerValue(0))  # unlimited
        bulk_apps = bulk_helper.Install(src)
        start = starts[i]
        bulk_apps.Start(ns.NanoSeconds(int(round(start * 1e9))))
        bulk_apps.Stop(ns.Seconds(duration))
        # Flow names as in scenarios/examples/*.toml.
        if sc["topology"] == "dumbbell":
            name = f"f{i}"
        elif "names" in sc and args.cc is None:
            name = sc["names"][i]
        elif len(args.flow_ccs) == 1:
            name = "bulk"
        else:
            name = cc if args.flow_ccs.count(cc) == 1 else f"{cc}-{i}"
        if per_socket_cc or args.trace:
            # 1 ns after StartApplication created the socket and sent the SYN; the first
            # ACK that reaches the congestion control is at least one RTT later.
            helpers.ScheduleSetupSender(
                bulk_apps.Get(0),
                ns.NanoSeconds(int(round(start * 1e9)) + 1),
                cc_classes[cc] if per_socket_cc else "",
                name,
                bool(args.trace),
            )
        sink = ns.DynamicCast[ns.PacketSink](sink_apps.Get(0))
        flows.append({"name": name, "cc": cc, "ns3_class": cc_classes[cc], "start_s": start, "sink": sink})
        keep += [sink_apps, bulk_apps]

    ns.Simulator.Stop(ns.Seconds(duration))
    t0 = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - t0
    events = int(ns.Simulator.GetEventCount())
    sim_end = ns.Simulator.Now().GetSeconds()

    out_flows = []
    for f in flows:
        delivered = int(f["sink"].GetTotalRx())
        span = duration - f["start_s"]
        out_flows.append(
            {
                "name": f["name"],
                "cc": f["cc"],
                "bytes_delivered": delivered,
                "goodput_bps": delivered * 8.0 / span if span > 0 else None,
                "ns3_class": f["ns3_class"],
                "start_s": f["start_s"],
            }
        )
    ge_model = topo_info.pop("ge_model", None)
    loss_record = None
    if ge_model is not None:
        lost = [int(x) for x in ge_model.Lost()]
        loss_record = {"link": "radio", "direction": "data", "transmissions": int(ge_model.Seen()), "lost": lost}
        if args.loss_out:
            with open(args.loss_out, "w") as fh:
                fh.write(
                    f"# ns-3 {release} ge-radio seed {args.seed}: 0-based indices of the packets lost on the "
                    f"data direction, out of {loss_record['transmissions']} received by the error model\n"
                )
                fh.writelines(f"{i}\n" for i in lost)
    if args.trace:
        helpers.CloseTrace()
    ns.Simulator.Destroy()
    del keep

    return {
        "simulator": "ns-3",
        "version": release,
        "scenario": args.scenario,
        "seed": args.seed,
        "wall_time_s": wall,
        "events": events,
        "events_per_s": events / wall if wall > 0 else None,
        "duration_s": duration,
        "sim_end_s": sim_end,
        "flows": out_flows,
        "loss_record": loss_record,
        "settings": {
            "ns3_pip_version": pip_version,
            "recovery": recovery,
            "segment_size": args.segment_size,
            "initial_cwnd": args.initial_cwnd,
            "delack_count": args.delack_count,
            "delack_timeout_s": args.delack_timeout,
            "min_rto_s": args.min_rto,
            "conn_timeout_s": args.conn_timeout,
            "initial_rtt_s": args.initial_rtt,
            "data_retries": args.data_retries,
            "sack": args.sack,
            "timestamps": args.timestamps,
            "window_scaling": args.window_scaling,
            "buffer_bytes": args.buffer,
            "cubic_hystart": args.cubic_hystart,
            "hybla_rtt0_s": args.hybla_rtt0,
            "hybla_rho_every_ack": args.hybla_rho_every_ack,
            "per_socket_cc": per_socket_cc,
            **topo_info,
        },
    }


def print_table(res):
    print(f"ns-3 {res['version']}  scenario {res['scenario']}  seed {res['seed']}  simulated {res['duration_s']:g} s")
    print(f"{'flow':<12} {'cc':<10} {'ns-3 class':<22} {'delivered B':>14} {'goodput Mbit/s':>15}")
    total = 0
    for f in res["flows"]:
        total += f["bytes_delivered"]
        print(
            f"{f['name']:<12} {f['cc']:<10} {f['ns3_class']:<22} {f['bytes_delivered']:>14,d} "
            f"{f['goodput_bps'] / 1e6:>15.3f}"
        )
    print(f"{'total':<46} {total:>14,d} {total * 8 / res['duration_s'] / 1e6:>15.3f}")
    print(
        f"Simulator::Run() wall time {res['wall_time_s']:.3f} s, {res['events']:,d} events "
        f"(Simulator::GetEventCount), {res['events_per_s']:,.0f} events/s"
    )


def main(argv=None):
    args = parse_args(argv)
    res = run(args)
    if args.json:
        print(json.dumps(res))
    else:
        print_table(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
