//! IPsec ESP in transport mode (RFC 4303), modelled by type: the TCP segment inside an
//! `Esp` body can be read only with the security association it was sealed under. A
//! proxy on the path holds no SA, so it sees no `Tcp` body to split; this is the property
//! LIFT and APOHN build on, and why a split PEP passes IPsec untouched.

use crate::packet::{Esp, EspSizes, TcpSegment};

/// One direction's security association, known only to its two endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SecurityAssociation {
    spi: u32,
    sizes: EspSizes,
}

impl SecurityAssociation {
    /// An SA with AES-CBC and HMAC-SHA1-96 sizes (`EspSizes::default`).
    pub fn new(spi: u32) -> SecurityAssociation {
        SecurityAssociation::with_sizes(spi, EspSizes::default())
    }
    pub fn with_sizes(spi: u32, sizes: EspSizes) -> SecurityAssociation {
        SecurityAssociation { spi, sizes }
    }
    pub fn spi(&self) -> u32 {
        self.spi
    }

    /// Encrypts `seg` into an ESP body.
    pub fn seal(&self, seq: u32, seg: TcpSegment) -> Esp {
        Esp {
            spi: self.spi,
            seq,
            sizes: self.sizes,
            inner: Box::new(seg),
        }
    }

    /// Decrypts an ESP body sealed under this SA; `None` for another SA's.
    pub fn open(&self, esp: Esp) -> Option<TcpSegment> {
        (esp.spi == self.spi).then_some(*esp.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_its_own_sa_opens_a_packet() {
        let seg = TcpSegment {
            len: 1000,
            ..Default::default()
        };
        let esp = SecurityAssociation::new(7).seal(1, seg.clone());
        // 20 + 1000 + 2 = 1022 -> 1024, plus 8 + 16 + 12.
        assert_eq!(esp.len(), 1060);
        assert_eq!(SecurityAssociation::new(8).open(esp.clone()), None);
        assert_eq!(SecurityAssociation::new(7).open(esp), Some(seg.clone()));
        // Seed 001's 18 bytes: header 8, trailer 2, ICV 8, no IV, no padding.
        let flat = SecurityAssociation::with_sizes(7, EspSizes::Flat { icv: 8 });
        assert_eq!(flat.seal(1, seg).len(), 20 + 1000 + 18);
    }
}
