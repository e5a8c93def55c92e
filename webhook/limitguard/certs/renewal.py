"""A CA renewal without a failed call and without a stored CA key: the rules its parts share.

In `generate` mode a renewal makes a new CA and its serving certificate at once (no CA key is
kept to sign with the old one). Three rules keep every caller of limitguard working through it:

- `limitguard certs --secret` writes the new Secret's `ca.crt` as the new CA first, then the CAs
  it replaces (the still valid ones of the webhooks' caBundle): whoever reads `ca.crt` trusts the
  certificate the pods still serve and the new one alike;
- a replica serves a certificate from a CA other than the one that issued the certificate it
  serves only `switch_delay` after it first saw it, once every reader has learnt that CA
  (`limitguard.http.tls.CertificateReloader`);
- the second scheduler's sidecar trusts the replaced CAs of such a `ca.crt` until `overlap`
  seconds after the new CA was made (`split_renewal_bundle`), then drops them.
"""

from __future__ import annotations

from cryptography import x509

from limitguard.certs.generate import BACKDATE


def made_at(certificate: x509.Certificate) -> float:
    """When limitguard made *certificate*, in seconds since the epoch (its notBefore is backdated)."""
    return (certificate.not_valid_before_utc + BACKDATE).timestamp()


def split_renewal_bundle(
    certificates: list[x509.Certificate], wall_time: float, overlap: float
) -> tuple[list[x509.Certificate], list[x509.Certificate]]:
    """A `ca.crt` as `limitguard certs --secret` writes it, as (in force, ended) at *wall_time*.

    The first CA issues the serving certificate and is always in force. Each one after it is a CA
    it replaced, in force until *overlap* seconds after the first was made; the moment is read from
    the certificates, so every reader, however late it starts, drops the same CAs at the same time.
    """
    if not certificates:
        return [], []
    current, *replaced = certificates
    if wall_time < made_at(current) + overlap:
        return list(certificates), []
    return [current], replaced


def _authority_key(certificate: x509.Certificate) -> bytes | None:
    try:
        extension = certificate.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier)
    except x509.ExtensionNotFound:
        return None
    return extension.value.key_identifier


def issuer_changed(served: x509.Certificate, new: x509.Certificate) -> bool:
    """Whether *new* comes from another CA key than *served*: by their authority key identifiers
    (the hash of the issuing CA's public key), else by the issuers' names."""
    served_key, new_key = _authority_key(served), _authority_key(new)
    if served_key is not None and new_key is not None:
        return served_key != new_key
    return served.issuer != new.issuer


def switch_delay(
    served: x509.Certificate | None, new: x509.Certificate, delay: float, wall_time: float
) -> float:
    """Seconds to keep serving *served* before *new*: none from the same CA (every reader already
    trusts it); *delay* from a new CA, but never past the moment *served* expires."""
    if served is None or delay <= 0 or not issuer_changed(served, new):
        return 0.0
    return max(0.0, min(delay, served.not_valid_after_utc.timestamp() - wall_time))
