//! TLS on the listener: rustls (ring), HTTP/1.1 only (ALPN `http/1.1`),
//! the certificate picked by a resolver whose [`CertifiedKey`] can be
//! swapped while serving ([`CertResolver::reload`]): handshakes after the
//! swap get the new one, connections already up keep theirs.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// The listener's certificate, swappable.
pub struct CertResolver {
    current: ArcSwap<CertifiedKey>,
    provider: Arc<CryptoProvider>,
    /// The files `current` was read from (for a reload of the same ones).
    files: Mutex<(PathBuf, PathBuf)>,
}

/// Why `tls_cert` and `tls_key` cannot be served; [`TlsFileError::key`]
/// names the key at fault.
#[derive(Debug, thiserror::Error)]
pub enum TlsFileError {
    #[error("{}: {why}", path.display())]
    Cert { path: PathBuf, why: String },
    #[error("{}: {why}", path.display())]
    Key { path: PathBuf, why: String },
}

impl TlsFileError {
    /// The configuration key of the file at fault.
    pub fn key(&self) -> &'static str {
        match self {
            TlsFileError::Cert { .. } => "tls_cert",
            TlsFileError::Key { .. } => "tls_key",
        }
    }
}

/// The chain in `cert` and the key in `key`, checked to belong together.
fn certified(
    cert: &Path,
    key: &Path,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, TlsFileError> {
    let cert_error = |why: String| TlsFileError::Cert {
        path: cert.to_owned(),
        why,
    };
    let key_error = |why: String| TlsFileError::Key {
        path: key.to_owned(),
        why,
    };
    let pem = std::fs::read(cert).map_err(|e| cert_error(e.to_string()))?;
    let chain = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| cert_error(format!("not PEM certificates: {e}")))?;
    if chain.is_empty() {
        return Err(cert_error("holds no PEM certificate".into()));
    }
    let pem = std::fs::read(key).map_err(|e| key_error(e.to_string()))?;
    let der = PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|e| key_error(format!("no PEM private key: {e}")))?;
    let signing = provider
        .key_provider
        .load_private_key(der)
        .map_err(|e| key_error(format!("cannot be used: {e}")))?;
    let certified = CertifiedKey::new(chain, signing);
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {
            Ok(certified)
        }
        Err(e) => Err(key_error(format!("does not match the certificate: {e}"))),
    }
}

impl CertResolver {
    /// Reads and checks the certificate chain and its key.
    pub fn load(cert: &Path, key: &Path) -> Result<CertResolver, TlsFileError> {
        let provider = crate::upstream::tls::provider();
        let current = certified(cert, key, &provider)?;
        Ok(CertResolver {
            current: ArcSwap::from_pointee(current),
            provider,
            files: Mutex::new((cert.to_owned(), key.to_owned())),
        })
    }

    /// Reads the files again and serves them from the next handshake on;
    /// files that cannot be served leave the current certificate in place.
    pub fn reload(&self, cert: &Path, key: &Path) -> Result<(), TlsFileError> {
        let next = certified(cert, key, &self.provider)?;
        self.current.store(Arc::new(next));
        *self.files.lock().unwrap_or_else(|e| e.into_inner()) = (cert.to_owned(), key.to_owned());
        tracing::info!(cert = %cert.display(), "TLS certificate reloaded");
        Ok(())
    }

    /// The certificate file and key file served now.
    pub fn files(&self) -> (PathBuf, PathBuf) {
        self.files.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The certificate served now (its chain, end entity first).
    pub fn chain(&self) -> Vec<CertificateDer<'static>> {
        self.current.load().cert.clone()
    }

    /// The rustls configuration the workers accept with: this resolver,
    /// no client certificates, HTTP/1.1.
    pub fn server_config(self: &Arc<Self>) -> Arc<rustls::ServerConfig> {
        let mut config = rustls::ServerConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()
            .expect("ring offers the default protocol versions")
            .with_no_client_auth()
            .with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

impl ResolvesServerCert for CertResolver {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.load_full())
    }
}

impl fmt::Debug for CertResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CertResolver").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn self_signed(name: &str) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec![name.to_owned()]).unwrap();
        let cert = params.self_signed(&key).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mcpgate-tls-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A handshake, in memory, of a client for `name` trusting `ca`.
    fn handshakes(server: &Arc<CertResolver>, ca: &rcgen::Certificate, name: &str) -> bool {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.der().clone()).unwrap();
        let client = rustls::ClientConfig::builder_with_provider(crate::upstream::tls::provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let name = name.to_owned().try_into().unwrap();
        let mut client = rustls::ClientConnection::new(Arc::new(client), name).unwrap();
        let mut server = rustls::ServerConnection::new(server.server_config()).unwrap();
        for _ in 0..10 {
            let mut bytes = Vec::new();
            while client.wants_write() {
                client.write_tls(&mut bytes).unwrap();
            }
            server.read_tls(&mut &bytes[..]).unwrap();
            if server.process_new_packets().is_err() {
                return false;
            }
            let mut bytes = Vec::new();
            while server.wants_write() {
                server.write_tls(&mut bytes).unwrap();
            }
            client.read_tls(&mut &bytes[..]).unwrap();
            if client.process_new_packets().is_err() {
                return false;
            }
            if !client.is_handshaking() && !server.is_handshaking() {
                return true;
            }
        }
        false
    }

    #[test]
    fn a_reload_serves_the_new_certificate_to_the_next_handshake() {
        let dir = temp_dir("swap");
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = params.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(params, ca_key);
        let mut files = Vec::new();
        for name in ["a.test", "b.test"] {
            let key = rcgen::KeyPair::generate().unwrap();
            let params = rcgen::CertificateParams::new(vec![name.to_owned()]).unwrap();
            let cert = params.signed_by(&key, &issuer).unwrap();
            let cert = write(&dir, &format!("{name}.crt"), &cert.pem());
            files.push((
                cert,
                write(&dir, &format!("{name}.key"), &key.serialize_pem()),
            ));
        }
        let resolver = Arc::new(CertResolver::load(&files[0].0, &files[0].1).unwrap());
        assert!(handshakes(&resolver, &ca, "a.test"));
        assert!(!handshakes(&resolver, &ca, "b.test"));
        resolver.reload(&files[1].0, &files[1].1).unwrap();
        assert!(handshakes(&resolver, &ca, "b.test"));
        assert!(!handshakes(&resolver, &ca, "a.test"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn reload_swaps_the_certificate_and_a_bad_key_keeps_the_old_one() {
        let dir = temp_dir("reload");
        let (cert_a, key_a) = self_signed("a.test");
        let (cert_b, key_b) = self_signed("b.test");
        let (ca, ka) = (write(&dir, "a.crt", &cert_a), write(&dir, "a.key", &key_a));
        let (cb, kb) = (write(&dir, "b.crt", &cert_b), write(&dir, "b.key", &key_b));
        let resolver = CertResolver::load(&ca, &ka).unwrap();
        let first = resolver.chain();

        // A key of another certificate, a file that is no key, a missing
        // file: refused, naming the key at fault; the old one stays.
        let garbage = write(&dir, "garbage.key", "not a key\n");
        for (cert, key, at_fault) in [
            (&cb, &ka, "tls_key"),
            (&cb, &garbage, "tls_key"),
            (&dir.join("missing.crt"), &kb, "tls_cert"),
            (&garbage, &kb, "tls_cert"),
        ] {
            let err = resolver.reload(cert, key).unwrap_err();
            assert_eq!(err.key(), at_fault, "{err}");
            assert_eq!(resolver.chain(), first);
        }

        assert_eq!(resolver.files(), (ca.clone(), ka.clone()));
        resolver.reload(&cb, &kb).unwrap();
        assert_ne!(resolver.chain(), first);
        assert_eq!(resolver.files(), (cb, kb));
        let _ = std::fs::remove_dir_all(dir);
    }
}
