//! The gateway's outputs: a simulated 4-channel PWM whose duty cycles live in RAM, driven
//! through `embedded-hal`'s [`SetDutyCycle`] as a real timer's PWM channels would be.

use core::convert::Infallible;

use embedded_hal::pwm::{ErrorType, SetDutyCycle};

/// Channels.
pub const CHANNELS: usize = 4;

/// Four PWM outputs, all at 0 % after boot.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    duty: [u16; CHANNELS],
}

/// One channel of [`Outputs`]: its duty cycle in hundredths (0 to 100).
#[derive(Debug)]
pub struct Channel<'a> {
    duty: &'a mut u16,
}

impl ErrorType for Channel<'_> {
    type Error = Infallible;
}

impl SetDutyCycle for Channel<'_> {
    fn max_duty_cycle(&self) -> u16 {
        100
    }

    fn set_duty_cycle(&mut self, duty: u16) -> Result<(), Infallible> {
        *self.duty = duty.min(100);
        Ok(())
    }
}

impl Outputs {
    /// All channels off.
    pub const fn new() -> Self {
        Self {
            duty: [0; CHANNELS],
        }
    }

    /// Channel `n` (0 to 3).
    pub fn channel(&mut self, n: usize) -> Option<Channel<'_>> {
        self.duty.get_mut(n).map(|duty| Channel { duty })
    }

    /// Every channel's duty cycle, in percent.
    pub fn percent(&self) -> [u16; CHANNELS] {
        self.duty
    }
}
