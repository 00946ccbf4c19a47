//! HTTPS: a certificate from PEM files, or one made for this machine by a local certificate
//! authority kept beside the app, and the TLS handshake in front of every connection.
//!
//! A made certificate is issued by a CA of its own (`ca.pem`), which is what clients trust
//! (`NODE_EXTRA_CA_CERTS`, `SSL_CERT_FILE`, ...): the server certificate can then be issued again
//! for new names or addresses without any client changing anything.

use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::error::TransportError;
use crate::private_file::write_private;

/// Where the server's certificate comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TlsConfig {
    /// A certificate chain and its private key, in PEM files (e.g. from the LAN's own CA).
    Files {
        /// The certificate chain, the server's certificate first.
        cert: PathBuf,
        /// Its private key (PKCS#8, PKCS#1 or SEC1).
        key: PathBuf,
    },
    /// A certificate made for this machine's names and addresses, kept in `dir` with the
    /// local CA that issued it (`ca.pem`, the file clients trust). Made once; issued again by the
    /// same CA when a name or address it does not cover is needed.
    Generated {
        /// Where the CA, its key, the certificate and its key are kept (keys mode 0600).
        dir: PathBuf,
        /// Names or addresses to cover besides the machine's own (e.g. a DNS alias).
        extra_names: Vec<String>,
    },
}

/// TLS ready to serve: the acceptor, and what an operator tells clients.
#[derive(Clone)]
pub(crate) struct Tls {
    acceptor: TlsAcceptor,
    /// What a client trusts.
    pub trust: TlsTrust,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("trust", &self.trust).finish()
    }
}

/// What a client of a TLS server trusts: a CA file (made certificates) or the certificate
/// itself, and its SHA-256 fingerprint to compare with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsTrust {
    /// The PEM file a client trusts: the local CA for made certificates, the chain's file for
    /// certificates from files.
    pub ca_file: PathBuf,
    /// SHA-256 of that certificate (DER), as `AB:CD:...`.
    pub fingerprint: String,
    /// The names and addresses the server certificate covers (made certificates only).
    pub names: Vec<String>,
}

const CA_CERT: &str = "ca.pem";
const CA_KEY: &str = "ca-key.pem";
const CA_NAME: &str = "ca-name.txt";
const CERT: &str = "cert.pem";
const KEY: &str = "key.pem";
/// The names the kept certificate covers, one per line (to know when to issue it again).
const NAMES: &str = "names.txt";
/// Time allowed for the TLS handshake (and, before it, the first byte).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// The first byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

impl Tls {
    /// Loads or makes the certificate for a server bound to `bind`.
    pub fn prepare(config: &TlsConfig, bind: SocketAddr) -> Result<Tls, TransportError> {
        let (chain, key, trust) = match config {
            TlsConfig::Files { cert, key } => {
                let chain = read_chain(cert)?;
                let key = PrivateKeyDer::from_pem_file(key)
                    .map_err(|error| tls_error(key, &error.to_string()))?;
                let trust = TlsTrust {
                    ca_file: cert.clone(),
                    fingerprint: fingerprint(&chain[0]),
                    names: Vec::new(),
                };
                (chain, key, trust)
            }
            TlsConfig::Generated { dir, extra_names } => {
                let mut names = machine_names(bind);
                for name in extra_names {
                    if !names.contains(name) {
                        names.push(name.clone());
                    }
                }
                made_certificate(dir, names)?
            }
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| TransportError::Tls(error.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|error| {
                TransportError::Tls(format!("the certificate and key do not fit: {error}"))
            })?;
        server.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls {
            acceptor: TlsAcceptor::from(Arc::new(server)),
            trust,
        })
    }

    /// The TLS stream of a new connection. A client speaking plain HTTP gets a plain-HTTP 400
    /// saying to use `https://`, and the connection closes.
    pub async fn accept(&self, mut stream: TcpStream) -> Result<TlsStream<TcpStream>, String> {
        let mut first = [0u8; 1];
        let peeked = tokio::time::timeout(HANDSHAKE_TIMEOUT, stream.peek(&mut first)).await;
        match peeked {
            Ok(Ok(1)) if first[0] == TLS_HANDSHAKE_RECORD => {}
            Ok(Ok(1)) => {
                let _ = stream.write_all(plain_http_refusal().as_bytes()).await;
                let _ = stream.shutdown().await;
                return Err("a plain-HTTP request on the TLS port was refused".to_owned());
            }
            Ok(Ok(_)) => return Err("the connection closed before the handshake".to_owned()),
            Ok(Err(error)) => return Err(error.to_string()),
            Err(_) => return Err("no handshake in time".to_owned()),
        }
        match tokio::time::timeout(HANDSHAKE_TIMEOUT, self.acceptor.accept(stream)).await {
            Ok(Ok(tls)) => Ok(tls),
            Ok(Err(error)) => Err(format!("TLS handshake failed: {error}")),
            Err(_) => Err("the TLS handshake did not finish in time".to_owned()),
        }
    }
}

/// What a plain-HTTP client reads on the TLS port: a 400 whose JSON-RPC error says what to do.
fn plain_http_refusal() -> String {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": crate::jsonrpc::codes::TRANSPORT_REFUSED,
            "message": "this server speaks HTTPS only: use its https:// URL and trust its certificate (the app prints both)",
        },
    })
    .to_string();
    format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn tls_error(path: &Path, what: &str) -> TransportError {
    TransportError::Tls(format!("{}: {what}", path.display()))
}

fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, TransportError> {
    let chain = CertificateDer::pem_file_iter(path)
        .and_then(|certificates| certificates.collect::<Result<Vec<_>, _>>())
        .map_err(|error| tls_error(path, &error.to_string()))?;
    if chain.is_empty() {
        return Err(tls_error(path, "no certificate in the file"));
    }
    Ok(chain)
}

/// SHA-256 of a certificate, as `AB:CD:...` (how `openssl x509 -fingerprint -sha256` shows it).
fn fingerprint(certificate: &CertificateDer<'_>) -> String {
    Sha256::digest(certificate.as_ref())
        .iter()
        .map(|byte| format!("{byte:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The names and addresses a client on the LAN may use for this machine: `localhost`, the
/// host name (and its `.local` mDNS form), loopback, and the bound address, or every
/// interface's address when bound to all of them.
fn machine_names(bind: SocketAddr) -> Vec<String> {
    let mut names = vec!["localhost".to_owned()];
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    if !host.is_empty() && host != "localhost" {
        names.push(host.clone());
        if !host.contains('.') {
            names.push(format!("{host}.local"));
        }
    }
    let mut addresses: Vec<IpAddr> = vec![
        IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
    ];
    if bind.ip().is_unspecified() {
        addresses.extend(
            if_addrs::get_if_addrs()
                .unwrap_or_default()
                .into_iter()
                .map(|interface| interface.ip()),
        );
    } else {
        addresses.push(bind.ip());
    }
    for address in addresses {
        let text = address.to_string();
        if !names.contains(&text) {
            names.push(text);
        }
    }
    names
}

/// The kept certificate when it covers `names`; else one issued now by the kept CA (made too
/// when missing).
fn made_certificate(
    dir: &Path,
    names: Vec<String>,
) -> Result<
    (
        Vec<CertificateDer<'static>>,
        PrivateKeyDer<'static>,
        TlsTrust,
    ),
    TransportError,
> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |error: std::io::Error| tls_error(&path, &error.to_string())
    };
    let at = |file: &str| dir.join(file);
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let (ca_params, ca_key, ca_der) = kept_or_new_ca(dir)?;
    let kept_names = std::fs::read_to_string(at(NAMES)).unwrap_or_default();
    let covered = names
        .iter()
        .all(|name| kept_names.lines().any(|kept| kept == name));
    let have_cert = at(CERT).is_file() && at(KEY).is_file();
    if !(covered && have_cert) {
        let mut all: Vec<String> = kept_names.lines().map(str::to_owned).collect();
        for name in &names {
            if !all.contains(name) {
                all.push(name.clone());
            }
        }
        let key = KeyPair::generate().map_err(|error| TransportError::Tls(error.to_string()))?;
        let mut params = CertificateParams::default();
        params.subject_alt_names = all.iter().filter_map(|name| san(name)).collect();
        params.distinguished_name = distinguished_name("bevy-mcp server");
        params.is_ca = IsCa::NoCa;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        let issuer = Issuer::new(ca_params, ca_key);
        let certificate = params
            .signed_by(&key, &issuer)
            .map_err(|error| TransportError::Tls(error.to_string()))?;
        std::fs::write(at(CERT), certificate.pem()).map_err(io(&at(CERT)))?;
        write_private(&at(KEY), key.serialize_pem().as_bytes()).map_err(io(&at(KEY)))?;
        std::fs::write(at(NAMES), all.join("\n") + "\n").map_err(io(&at(NAMES)))?;
        tracing::info!(dir = %dir.display(), names = ?all, "issued a TLS certificate for this machine");
    }
    let leaf = read_chain(&at(CERT))?;
    let key = PrivateKeyDer::from_pem_file(at(KEY))
        .map_err(|error| tls_error(&at(KEY), &error.to_string()))?;
    let mut chain = leaf;
    chain.push(ca_der.clone());
    let names = std::fs::read_to_string(at(NAMES))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    Ok((
        chain,
        key,
        TlsTrust {
            ca_file: at(CA_CERT),
            fingerprint: fingerprint(&ca_der),
            names,
        },
    ))
}

/// The CA kept in `dir`, or a new one written there. Its parameters are rebuilt from its name
/// (kept in `ca-name.txt`): an issuer needs only its name, key and key usages.
fn kept_or_new_ca(
    dir: &Path,
) -> Result<(CertificateParams, KeyPair, CertificateDer<'static>), TransportError> {
    let cert_path = dir.join(CA_CERT);
    let key_path = dir.join(CA_KEY);
    let name_path = dir.join(CA_NAME);
    let tls = |error: rcgen::Error| TransportError::Tls(error.to_string());
    let kept = (
        std::fs::read_to_string(&key_path),
        std::fs::read_to_string(&name_path),
    );
    match kept {
        (Ok(key_pem), Ok(name)) if cert_path.is_file() => {
            let key = KeyPair::from_pem(&key_pem).map_err(tls)?;
            let der = read_chain(&cert_path)?.remove(0);
            Ok((ca_params(name.trim()), key, der))
        }
        (Err(error), _) | (_, Err(error)) if error.kind() != ErrorKind::NotFound => {
            Err(tls_error(dir, &error.to_string()))
        }
        _ => {
            let key = KeyPair::generate().map_err(tls)?;
            let host = gethostname::gethostname().to_string_lossy().into_owned();
            let mut id = [0u8; 4];
            getrandom::fill(&mut id).map_err(|error| TransportError::Tls(error.to_string()))?;
            let id: String = id.iter().map(|byte| format!("{byte:02x}")).collect();
            let name = format!("bevy-mcp local CA {id} ({host})");
            let params = ca_params(&name);
            let certificate = params.self_signed(&key).map_err(tls)?;
            write_private(&key_path, key.serialize_pem().as_bytes())
                .map_err(|error| tls_error(&key_path, &error.to_string()))?;
            std::fs::write(&cert_path, certificate.pem())
                .map_err(|error| tls_error(&cert_path, &error.to_string()))?;
            std::fs::write(&name_path, format!("{name}\n"))
                .map_err(|error| tls_error(&name_path, &error.to_string()))?;
            // A new CA: a certificate issued by an earlier one is of no use.
            let _ = std::fs::remove_file(dir.join(CERT));
            let der = certificate.der().clone();
            Ok((params, key, der))
        }
    }
}

/// A CA that may issue server certificates only (path length 0).
fn ca_params(common_name: &str) -> CertificateParams {
    let mut params = CertificateParams::default();
    params.distinguished_name = distinguished_name(common_name);
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params
}

fn distinguished_name(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name
}

fn san(name: &str) -> Option<SanType> {
    match name.parse::<IpAddr>() {
        Ok(address) => Some(SanType::IpAddress(address)),
        Err(_) => name.to_owned().try_into().ok().map(SanType::DnsName),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_made_certificate_is_kept_and_issued_again_only_for_new_names() {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let bind: SocketAddr = ([127, 0, 0, 1], 0).into();
        let config = |extra: &[&str]| TlsConfig::Generated {
            dir: dir.path().to_owned(),
            extra_names: extra.iter().map(|name| (*name).to_owned()).collect(),
        };
        let first = Tls::prepare(&config(&[]), bind).unwrap_or_else(|error| panic!("{error}"));
        let cert = std::fs::read(dir.path().join(CERT)).unwrap_or_default();
        let again = Tls::prepare(&config(&[]), bind).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(first.trust, again.trust, "the same CA and names");
        assert_eq!(
            std::fs::read(dir.path().join(CERT)).unwrap_or_default(),
            cert,
            "the certificate is kept"
        );
        let wider = Tls::prepare(&config(&["game-box.lan"]), bind)
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(
            wider.trust.fingerprint, first.trust.fingerprint,
            "clients keep trusting the same CA"
        );
        assert!(wider.trust.names.iter().any(|name| name == "game-box.lan"));
        assert!(wider.trust.names.iter().any(|name| name == "127.0.0.1"));
        assert_ne!(
            std::fs::read(dir.path().join(CERT)).unwrap_or_default(),
            cert
        );
        #[cfg(unix)]
        for key in [CA_KEY, KEY] {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(key))
                .map(|meta| meta.permissions().mode() & 0o777)
                .unwrap_or(0);
            assert_eq!(mode, 0o600, "{key}");
        }
    }

    #[test]
    fn the_refusal_for_plain_http_is_well_formed() {
        let refusal = plain_http_refusal();
        let (head, body) = refusal.split_once("\r\n\r\n").unwrap_or_default();
        assert!(head.contains(&format!("content-length: {}", body.len())));
        assert!(serde_json::from_str::<serde_json::Value>(body).is_ok());
    }
}
