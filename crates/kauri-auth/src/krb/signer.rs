//! A long-term or session key as the PAC's signer: PAC signatures are the key's own
//! keyed checksum with key usage 17 (MS-PAC 2.8).

use super::crypto::{CryptoError, Key};
use super::pac::{PacError, PacSigner};

/// Key usage of PAC signatures (KERB_NON_KERB_CKSUM_SALT).
pub const PAC_SIGNATURE_USAGE: u32 = 17;

/// See the module documentation.
pub struct KeySigner<'a>(pub &'a Key);

impl PacSigner for KeySigner<'_> {
    fn checksum_type(&self) -> i32 {
        self.0.etype().checksum_type()
    }

    fn sign(&self, data: &[u8]) -> Result<Vec<u8>, PacError> {
        self.0
            .checksum(PAC_SIGNATURE_USAGE, data)
            .map_err(|e| PacError::Signer(e.to_string()))
    }

    fn verify(&self, checksum_type: i32, data: &[u8], signature: &[u8]) -> Result<(), PacError> {
        match self
            .0
            .verify_checksum(PAC_SIGNATURE_USAGE, data, checksum_type, signature)
        {
            Ok(()) => Ok(()),
            Err(CryptoError::BadChecksum | CryptoError::IntegrityFailure) => {
                Err(PacError::ChecksumMismatch)
            }
            Err(e) => Err(PacError::Signer(e.to_string())),
        }
    }
}
