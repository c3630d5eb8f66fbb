import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  /** The CA's certificate, what a client trusts. */
  caFile: string;
  /** A server certificate for 127.0.0.1 and localhost signed by that CA, and its key. */
  certFile: string;
  keyFile: string;
  /** Another CA's certificate, which did not sign the server's. */
  strangerCaFile: string;
}

const openssl = (dir: string, ...args: string[]) =>
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

function selfSignedCa(dir: string, name: string): void {
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    `${name}-key.pem`,
    '-out',
    `${name}.pem`,
  );
}

/** A throwaway CA and a loopback server certificate it signed, made by Debian's openssl. */
export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'vc-certs-'));
  selfSignedCa(dir, 'ca');
  selfSignedCa(dir, 'stranger');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName = IP:127.0.0.1, DNS:localhost\n');
  openssl(
    dir,
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    '/CN=nats',
    '-keyout',
    'server-key.pem',
    '-out',
    'server.csr',
  );
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca-key.pem',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'san.ext',
    '-out',
    'server.pem',
  );
  return {
    caFile: join(dir, 'ca.pem'),
    certFile: join(dir, 'server.pem'),
    keyFile: join(dir, 'server-key.pem'),
    strangerCaFile: join(dir, 'stranger.pem'),
  };
}
