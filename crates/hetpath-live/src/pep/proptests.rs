//! Property tests of gateway mode's datagrams: no bytes panic a decoder; frames survive
//! sealing and opening; any altered byte, a replay or another session's datagram is
//! rejected, and reordering within the window is not.

use super::frame::{decode, encode, ConnId, Frame, RefuseReason};
use super::seal::{parse_key, Aead, OpenError, Opener, Role, Sealer, OVERHEAD};
use proptest::prelude::*;
use std::net::{Ipv4Addr, SocketAddrV4};

fn addr() -> impl Strategy<Value = SocketAddrV4> {
    (any::<u32>(), any::<u16>()).prop_map(|(a, p)| SocketAddrV4::new(Ipv4Addr::from(a), p))
}

fn frame() -> impl Strategy<Value = Frame> {
    let conn = any::<u64>().prop_map(ConnId);
    prop_oneof![
        (conn.clone(), addr(), addr()).prop_map(|(conn, client, server)| Frame::Open {
            conn,
            client,
            server
        }),
        conn.clone().prop_map(|conn| Frame::Accept { conn }),
        (conn.clone(), 0..4usize).prop_map(|(conn, r)| Frame::Refuse {
            conn,
            reason: [
                RefuseReason::Refused,
                RefuseReason::Unreachable,
                RefuseReason::Timeout,
                RefuseReason::Policy
            ][r],
        }),
        (
            conn.clone(),
            proptest::collection::vec(any::<u8>(), 0..1500)
        )
            .prop_map(|(conn, bytes)| Frame::Segment { conn, bytes }),
        conn.prop_map(|conn| Frame::Reset { conn }),
    ]
}

fn aead() -> impl Strategy<Value = Aead> {
    prop_oneof![Just(Aead::ChaCha20Poly1305), Just(Aead::Aes256Gcm)]
}

fn key(seed: u8) -> [u8; 32] {
    [seed; 32]
}

proptest! {
    #[test]
    fn no_bytes_panic_the_decoders(bytes in proptest::collection::vec(any::<u8>(), 0..600), a in aead()) {
        let _ = decode(&bytes);
        let _ = parse_key(&bytes);
        let mut o = Opener::new(&key(1), a, Role::B, 1);
        prop_assert!(o.open(&bytes).is_err(), "random bytes never authenticate");
    }

    #[test]
    fn frames_round_trip_through_a_sealed_datagram(frames in proptest::collection::vec(frame(), 0..6), a in aead()) {
        let plain = encode(&frames).unwrap();
        prop_assert_eq!(decode(&plain).unwrap(), frames.clone());
        let mut s = Sealer::new(&key(2), a, Role::A, 1000);
        let mut o = Opener::new(&key(2), a, Role::B, 1000);
        let mut d = Vec::new();
        s.seal(&plain, &mut d).unwrap();
        prop_assert_eq!(d.len(), plain.len() + OVERHEAD);
        let opened = o.open(&d).unwrap();
        prop_assert_eq!(decode(&opened).unwrap(), frames);
        prop_assert_eq!(o.open(&d), Err(OpenError::Replay));
    }

    #[test]
    fn any_altered_byte_is_rejected(frames in proptest::collection::vec(frame(), 1..3), a in aead(),
                                   at in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let mut s = Sealer::new(&key(3), a, Role::B, 7);
        let mut o = Opener::new(&key(3), a, Role::A, 7);
        let mut d = Vec::new();
        s.seal(&encode(&frames).unwrap(), &mut d).unwrap();
        let i = at.index(d.len());
        d[i] ^= flip;
        prop_assert!(o.open(&d).is_err());
        d[i] ^= flip;
        prop_assert!(o.open(&d).is_ok(), "the rejected copy moved no state");
    }

    #[test]
    fn reordering_inside_the_window_is_accepted_once(order in Just((0..200u64).collect::<Vec<_>>()).prop_shuffle(), a in aead()) {
        let mut s = Sealer::new(&key(4), a, Role::A, 5);
        let mut o = Opener::new(&key(4), a, Role::B, 5);
        let sealed: Vec<Vec<u8>> = (0..200u64).map(|i| {
            let mut d = Vec::new();
            s.seal(&encode(&[Frame::Reset { conn: ConnId(i) }]).unwrap(), &mut d).unwrap();
            d
        }).collect();
        for &i in &order {
            let got = decode(&o.open(&sealed[i as usize]).unwrap()).unwrap();
            prop_assert_eq!(got, vec![Frame::Reset { conn: ConnId(i) }]);
        }
        for d in &sealed {
            prop_assert_eq!(o.open(d), Err(OpenError::Replay));
        }
    }
}

#[test]
fn another_sessions_datagram_is_not_opened() {
    let a = Aead::ChaCha20Poly1305;
    let mut o = Opener::new(&key(5), a, Role::B, 100);
    let mut d = Vec::new();
    Sealer::new(&key(5), a, Role::A, 200)
        .seal(b"", &mut d)
        .unwrap();
    assert_eq!(o.open(&d), Err(OpenError::UnknownSession));
    let mut d = Vec::new();
    Sealer::new(&key(6), a, Role::A, 100)
        .seal(b"", &mut d)
        .unwrap();
    assert_eq!(o.open(&d), Err(OpenError::Forged), "its id, another key");
}

#[test]
fn the_wrong_key_role_or_aead_is_rejected() {
    let mut s = Sealer::new(&key(6), Aead::Aes256Gcm, Role::A, 1);
    let mut d = Vec::new();
    s.seal(b"\x05", &mut d).unwrap();
    assert_eq!(
        Opener::new(&key(7), Aead::Aes256Gcm, Role::B, 1).open(&d),
        Err(OpenError::Forged)
    );
    assert_eq!(
        Opener::new(&key(6), Aead::Aes256Gcm, Role::A, 1).open(&d),
        Err(OpenError::OwnRole)
    );
    assert_eq!(
        Opener::new(&key(6), Aead::ChaCha20Poly1305, Role::B, 1).open(&d),
        Err(OpenError::OtherAead)
    );
}

#[test]
fn key_files_are_hex_or_raw_and_private() {
    let hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n";
    assert!(parse_key(hex.as_bytes()).is_some());
    assert!(parse_key(&[9u8; 32]).is_some());
    assert!(parse_key(b"0011").is_none());
    let dir = std::env::temp_dir().join(format!("hetpath-pep-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("k");
    std::fs::write(&p, hex).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = super::seal::load_key(&p).err().unwrap().to_string();
    assert!(e.contains("chmod 600"), "{e}");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(super::seal::load_key(&p).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}
