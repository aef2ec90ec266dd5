//! TLS to an `https://` upstream: rustls (ring), the server's certificate
//! always verified, against Mozilla's roots or, with `upstream_ca_file`,
//! against that file's certificates instead; SNI from the URL's host (an
//! IP literal is checked against the certificate's IP addresses); ALPN
//! `http/1.1`, the only protocol the forwarder speaks.

use std::fmt;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

/// What a connection to an `https://` upstream is made with.
#[derive(Clone)]
pub struct UpstreamTls {
    /// Shared by every worker and by the catalog listing's roots.
    pub config: Arc<rustls::ClientConfig>,
    /// The name the certificate must hold, sent as SNI when a DNS name.
    pub name: ServerName<'static>,
    /// `upstream_ca_file`'s certificates, when given: the only roots.
    pub ca: Option<Arc<Vec<CertificateDer<'static>>>>,
}

/// Why an `https://` upstream cannot be verified as configured (its host,
/// or `upstream_ca_file`).
#[derive(Debug, thiserror::Error)]
pub enum UpstreamTlsError {
    #[error("holds no PEM certificate")]
    Empty,
    #[error("is not PEM certificates: {0}")]
    Pem(String),
    #[error("a certificate cannot be used as a root: {0}")]
    Root(rustls::Error),
    #[error("{0:?} is not a name a certificate can be verified for")]
    Name(String),
}

/// The crypto provider of every TLS connection (the one ureq uses too).
pub(crate) fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// PEM certificates, in their order; none is an error.
pub fn read_pem_certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, UpstreamTlsError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| UpstreamTlsError::Pem(e.to_string()))?;
    if certs.is_empty() {
        return Err(UpstreamTlsError::Empty);
    }
    Ok(certs)
}

impl UpstreamTls {
    /// For `host` (as the URL wrote it, brackets and all), trusting `ca`'s
    /// certificates, or Mozilla's roots without them.
    pub(crate) fn new(
        host: &str,
        ca: Option<Vec<CertificateDer<'static>>>,
    ) -> Result<UpstreamTls, UpstreamTlsError> {
        let mut roots = rustls::RootCertStore::empty();
        match &ca {
            Some(certs) => {
                for cert in certs {
                    roots.add(cert.clone()).map_err(UpstreamTlsError::Root)?;
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        let mut config = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("ring offers the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(bare.to_owned())
            .map_err(|_| UpstreamTlsError::Name(bare.to_owned()))?;
        Ok(UpstreamTls {
            config: Arc::new(config),
            name,
            ca: ca.map(Arc::new),
        })
    }
}

impl fmt::Debug for UpstreamTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpstreamTls")
            .field("name", &self.name)
            .field("ca", &self.ca.as_ref().map(|c| c.len()))
            .finish()
    }
}

impl PartialEq for UpstreamTls {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.ca == other.ca
    }
}

impl Eq for UpstreamTls {}

/// What a failed handshake is logged with: a certificate the roots do not
/// vouch for, or for another name, says so.
pub(crate) fn describe(error: &std::io::Error) -> String {
    let rustls = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    match rustls {
        Some(rustls::Error::InvalidCertificate(why)) => {
            format!("certificate verification failed: {why}")
        }
        Some(other) => format!("TLS handshake failed: {other}"),
        None => format!("TLS handshake failed: {error}"),
    }
}
