// Sign a plugin artifact with node's crypto and attach the bundle with the peer tool,
// @sigstore/oci's attachArtifactToImage (the referrers tag where the registry has no referrers
// API), the public key in the annotation plugman reads. Offline: the registry is on 127.0.0.1.
// Usage: node attach.js REGISTRY REPOSITORY TAG  -> prints {"digest": ..., "fingerprint": ...}
'use strict';
const crypto = require('crypto');
const { bundleFromJSON, bundleToJSON } = require('@sigstore/bundle');
const { attachArtifactToImage } = require('@sigstore/oci');

const BUNDLE = 'application/vnd.dev.sigstore.bundle.v0.3+json';

async function main() {
  const [registry, repository, tag] = process.argv.slice(2);
  const response = await fetch(`http://${registry}/v2/${repository}/manifests/${tag}`, {
    headers: { Accept: 'application/vnd.oci.image.manifest.v1+json' },
  });
  if (!response.ok) throw new Error(`GET manifest: HTTP ${response.status}`);
  const manifest = Buffer.from(await response.arrayBuffer());
  const digest = 'sha256:' + crypto.createHash('sha256').update(manifest).digest('hex');
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const der = publicKey.export({ type: 'spki', format: 'der' });
  const fingerprint = 'sha256:' + crypto.createHash('sha256').update(der).digest('hex');
  const bundle = bundleFromJSON({
    mediaType: BUNDLE,
    verificationMaterial: {
      publicKey: { hint: fingerprint },
      tlogEntries: [],
      timestampVerificationData: { rfc3161Timestamps: [] },
    },
    messageSignature: {
      messageDigest: {
        algorithm: 'SHA2_256',
        digest: crypto.createHash('sha256').update(manifest).digest('base64'),
      },
      signature: crypto.sign('sha256', manifest, privateKey).toString('base64'),
    },
  });
  await attachArtifactToImage({
    imageName: `${registry}/${repository}`,
    imageDigest: digest,
    artifact: Buffer.from(JSON.stringify(bundleToJSON(bundle))),
    mediaType: BUNDLE,
    annotations: {
      'dev.plugman.signature.publickey': publicKey.export({ type: 'spki', format: 'pem' }),
    },
    fetchOpts: { retry: false },
  });
  process.stdout.write(JSON.stringify({ digest, fingerprint }));
}

main().catch((err) => {
  process.stderr.write(`${err.message} ${err.cause ? err.cause.message : ''}\n`);
  process.exit(1);
});
