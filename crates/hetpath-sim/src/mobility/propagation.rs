//! Received power versus distance, and the ranges that follow from receive thresholds.
//!
//! These are ns-2's deterministic path-loss models (ns-2 manual ch. 18 "Radio
//! Propagation Models"; Rappaport, *Wireless Communications*, ch. 4), so that a
//! scenario with ns-2's default radio gets ns-2's 250 m cell without tuning.

use std::f64::consts::PI;

/// Speed of light in m/s (the value ns-2 uses, `SPEED_OF_LIGHT`).
const SPEED_OF_LIGHT: f64 = 299_792_458.0;
/// Distances below this are treated as this, so distance 0 never divides by zero.
const MIN_DISTANCE_M: f64 = 1e-3;

/// Which deterministic path-loss model a radio uses.
/// Why radio parameters are unusable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RadioError {
    #[error("radio {name} must be positive and finite, got {value}")]
    NotPositive { name: &'static str, value: f64 },
    #[error("radio warn_threshold_w ({warn}) must be >= rx_threshold_w ({rx})")]
    WarnBelowReception { warn: f64, rx: f64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathLoss {
    /// Friis free space: power falls with d^2.
    FreeSpace,
    /// ns-2's `TwoRayGround`: Friis up to the crossover distance, d^4 beyond it.
    TwoRayGround,
}

/// A radio: transmitter, antennas and the receive thresholds the simulator acts on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Radio {
    pub model: PathLoss,
    /// Transmit power Pt in watts (ns-2 `Phy/WirelessPhy Pt_`).
    pub tx_power_w: f64,
    pub frequency_hz: f64,
    /// Antenna height above ground, the same at both ends (ht = hr).
    pub antenna_height_m: f64,
    /// Antenna gain, the same at both ends (Gt = Gr).
    pub antenna_gain: f64,
    /// System loss factor L (>= 1 in practice; 1 means none).
    pub system_loss: f64,
    /// Frames received below this power are lost (ns-2 `RXThresh_`).
    pub rx_threshold_w: f64,
    /// Frames received below this power signal an impending disconnection.
    pub warn_threshold_w: f64,
}

impl Radio {
    /// ns-2's default `Phy/WirelessPhy` (914 MHz Lucent WaveLAN) with two-ray ground:
    /// 250 m reception range. The warning threshold is 3 dB above the receive threshold.
    pub fn ns2_default() -> Radio {
        let rx = 3.652e-10;
        Radio {
            model: PathLoss::TwoRayGround,
            tx_power_w: 0.281_838_15,
            frequency_hz: 914e6,
            antenna_height_m: 1.5,
            antenna_gain: 1.0,
            system_loss: 1.0,
            rx_threshold_w: rx,
            warn_threshold_w: 2.0 * rx,
        }
    }

    /// Checks that every parameter is positive and finite and that the warning
    /// threshold is not below the receive threshold (else it could never fire first).
    pub fn validate(&self) -> Result<(), RadioError> {
        let fields = [
            ("tx_power_w", self.tx_power_w),
            ("frequency_hz", self.frequency_hz),
            ("antenna_height_m", self.antenna_height_m),
            ("antenna_gain", self.antenna_gain),
            ("system_loss", self.system_loss),
            ("rx_threshold_w", self.rx_threshold_w),
            ("warn_threshold_w", self.warn_threshold_w),
        ];
        for (name, v) in fields {
            if !(v.is_finite() && v > 0.0) {
                return Err(RadioError::NotPositive { name, value: v });
            }
        }
        if self.warn_threshold_w < self.rx_threshold_w {
            return Err(RadioError::WarnBelowReception {
                warn: self.warn_threshold_w,
                rx: self.rx_threshold_w,
            });
        }
        Ok(())
    }

    fn wavelength_m(&self) -> f64 {
        SPEED_OF_LIGHT / self.frequency_hz
    }

    /// Pt * Gt * Gr / L, the factor common to both models.
    fn eirp_over_loss(&self) -> f64 {
        self.tx_power_w * self.antenna_gain * self.antenna_gain / self.system_loss
    }

    /// Friis numerator: Pr = friis_k / d^2.
    fn friis_k(&self) -> f64 {
        let lambda = self.wavelength_m();
        self.eirp_over_loss() * lambda * lambda / ((4.0 * PI) * (4.0 * PI))
    }

    /// Two-ray numerator: Pr = two_ray_k / d^4.
    fn two_ray_k(&self) -> f64 {
        let h2 = self.antenna_height_m * self.antenna_height_m;
        self.eirp_over_loss() * h2 * h2
    }

    /// Two-ray crossover distance dc = 4*pi*ht*hr / lambda (ns-2 `TwoRayGround::Pr`).
    /// Both formulas give the same power at dc, so the model is continuous.
    pub fn crossover_distance_m(&self) -> f64 {
        4.0 * PI * self.antenna_height_m * self.antenna_height_m / self.wavelength_m()
    }

    /// Received power in watts at `distance_m` (below 1 mm, as at 1 mm).
    ///
    /// Free space (Friis): Pr = Pt*Gt*Gr*lambda^2 / ((4*pi)^2 * d^2 * L).
    /// Two-ray ground: Friis for d < dc, else Pr = Pt*Gt*Gr*ht^2*hr^2 / (d^4 * L).
    pub fn received_power_w(&self, distance_m: f64) -> f64 {
        let d = if distance_m.is_nan() {
            distance_m
        } else {
            distance_m.max(MIN_DISTANCE_M)
        };
        match self.model {
            PathLoss::TwoRayGround if d >= self.crossover_distance_m() => {
                self.two_ray_k() / (d * d * d * d)
            }
            _ => self.friis_k() / (d * d),
        }
    }

    /// The distance at which the received power is `power_w`: the inverse of
    /// `received_power_w`, decreasing in `power_w` (0 W gives infinity). Powers above
    /// the 1 mm power give the unclamped formula's distance, below 1 mm.
    pub fn distance_for_power(&self, power_w: f64) -> f64 {
        let friis_d = (self.friis_k() / power_w).sqrt();
        match self.model {
            PathLoss::FreeSpace => friis_d,
            PathLoss::TwoRayGround => {
                if friis_d < self.crossover_distance_m() {
                    friis_d
                } else {
                    (self.two_ray_k() / power_w).sqrt().sqrt()
                }
            }
        }
    }

    /// Beyond this distance frames are lost.
    pub fn reception_range_m(&self) -> f64 {
        self.distance_for_power(self.rx_threshold_w)
    }

    /// Beyond this distance frames carry the impending-disconnection signal.
    pub fn warning_range_m(&self) -> f64 {
        self.distance_for_power(self.warn_threshold_w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_space() -> Radio {
        Radio {
            model: PathLoss::FreeSpace,
            ..Radio::ns2_default()
        }
    }

    #[test]
    fn ns2_default_range_is_250_m() {
        let r = Radio::ns2_default();
        r.validate().unwrap();
        assert!(
            (r.reception_range_m() - 250.0).abs() < 0.5,
            "{}",
            r.reception_range_m()
        );
    }

    #[test]
    fn models_agree_below_crossover() {
        let (tr, fs) = (Radio::ns2_default(), free_space());
        let dc = tr.crossover_distance_m();
        assert!(dc > 80.0 && dc < 90.0, "{dc}");
        for d in [0.0, 0.5, 1.0, 10.0, 50.0, dc * 0.999] {
            assert_eq!(tr.received_power_w(d), fs.received_power_w(d), "d = {d}");
        }
        // Continuous at the crossover.
        let (below, at) = (fs.received_power_w(dc), tr.received_power_w(dc));
        assert!((below - at).abs() <= 1e-9 * at);
    }

    #[test]
    fn power_strictly_decreasing() {
        for r in [Radio::ns2_default(), free_space()] {
            let mut prev = f64::INFINITY;
            let mut d = 0.01;
            while d < 10_000.0 {
                let p = r.received_power_w(d);
                assert!(
                    p.is_finite() && p > 0.0 && p < prev,
                    "{:?} d = {d}",
                    r.model
                );
                prev = p;
                d *= 1.07;
            }
            assert!(r.received_power_w(0.0).is_finite());
        }
    }

    #[test]
    fn distance_for_power_inverts() {
        for r in [Radio::ns2_default(), free_space()] {
            let dc = r.crossover_distance_m();
            for d in [
                0.01,
                1.0,
                30.0,
                dc * 0.9,
                dc * 1.1,
                150.0,
                250.0,
                550.0,
                5_000.0,
            ] {
                let back = r.distance_for_power(r.received_power_w(d));
                assert!((back - d).abs() <= 1e-6 * d, "{:?}: {d} -> {back}", r.model);
            }
            assert!(r.distance_for_power(0.0).is_infinite());
        }
    }

    #[test]
    fn warning_range_inside_reception_range() {
        for r in [Radio::ns2_default(), free_space()] {
            assert!(r.warning_range_m() < r.reception_range_m());
        }
        // 3 dB with d^4 loss is a factor 2^(1/4) in range.
        let r = Radio::ns2_default();
        let ratio = r.reception_range_m() / r.warning_range_m();
        assert!((ratio - 2f64.powf(0.25)).abs() < 1e-9);
    }

    #[test]
    fn validate_rejects_bad_fields() {
        let mut r = Radio::ns2_default();
        r.tx_power_w = -1.0;
        let e = r.validate().unwrap_err().to_string();
        assert!(e.contains("tx_power_w"), "{e}");
        let mut r = Radio::ns2_default();
        r.frequency_hz = f64::NAN;
        assert!(r
            .validate()
            .unwrap_err()
            .to_string()
            .contains("frequency_hz"));
        let mut r = Radio::ns2_default();
        r.warn_threshold_w = r.rx_threshold_w / 2.0;
        assert!(r
            .validate()
            .unwrap_err()
            .to_string()
            .contains("warn_threshold_w"));
    }
}
