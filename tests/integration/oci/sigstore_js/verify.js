// Verify plugman's signature of a plugin artifact with the peer tool, @sigstore/verify, offline:
// the artifact's manifest, the referrers tag index (sha256-<hex>), the signature manifest and
// its bundle are read from the registry over its HTTP API; the bundle is verified over the
// manifest bytes with the public key the signature carries (thresholds 0: a key, no log).
// Usage: node verify.js REGISTRY REPOSITORY TAG  -> prints {"verified": true, "hint": ...}
'use strict';
const crypto = require('crypto');
const { bundleFromJSON } = require('@sigstore/bundle');
const { Verifier, toTrustMaterial, toSignedEntity } = require('@sigstore/verify');

const BUNDLE = 'application/vnd.dev.sigstore.bundle.v0.3+json';
const ACCEPT = 'application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json';

async function main() {
  const [registry, repository, tag] = process.argv.slice(2);
  const base = `http://${registry}/v2/${repository}`;
  const get = async (path) => {
    const response = await fetch(`${base}/${path}`, { headers: { Accept: ACCEPT } });
    if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  };
  const manifest = await get(`manifests/${tag}`);
  const digest = 'sha256:' + crypto.createHash('sha256').update(manifest).digest('hex');
  const index = JSON.parse(await get(`manifests/${digest.replace(':', '-')}`));
  const listed = index.manifests.filter((m) => m.artifactType === BUNDLE);
  if (listed.length === 0) throw new Error('no signature in the referrers tag');
  const results = [];
  for (const entry of listed) {
    const signature = JSON.parse(await get(`manifests/${entry.digest}`));
    if (signature.subject.digest !== digest) throw new Error('signature of another manifest');
    const bundle = bundleFromJSON(JSON.parse(await get(`blobs/${signature.layers[0].digest}`)));
    const pem = signature.annotations['dev.plugman.signature.publickey'];
    const der = crypto.createPublicKey(pem).export({ type: 'spki', format: 'der' });
    const hint = bundle.verificationMaterial.content.publicKey.hint;
    const fingerprint = 'sha256:' + crypto.createHash('sha256').update(der).digest('hex');
    const roots = { certificateAuthorities: [], timestampAuthorities: [], tlogs: [], ctlogs: [] };
    const trust = toTrustMaterial(roots, { [hint]: { rawBytes: der } });
    const verifier = new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 });
    verifier.verify(toSignedEntity(bundle, manifest)); // throws when it does not verify
    results.push({ verified: true, hint, fingerprint });
  }
  process.stdout.write(JSON.stringify({ digest, signatures: results }));
}

main().catch((err) => {
  process.stderr.write(`${err.code || ''} ${err.message}\n`);
  process.exit(1);
});
