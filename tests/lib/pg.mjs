// pg.mjs - a throwaway PostgreSQL server for Node tests, and the queries tests
// make on it (Debian's `psql` client through child_process; no npm package).
//
//   const pg = await startPostgres();     // cluster under /tmp/sy-pg-XXXX, free port
//   pg.url                                // postgresql://postgres@127.0.0.1:PORT/postgres
//   const url = await pg.createDb('x');   // a fresh database, its URL
//   await pg.psql('SELECT ...', url)      // -> rows as objects (json_agg), [] for other statements
//   await pg.psqlFile(path, url)          // run an SQL file (ON_ERROR_STOP)
//   await pg.halt()                       // immediate shutdown, data kept (a DB outage)
//   await pg.restart()                    // start again on the same port (after halt, or halt + start)
//   await pg.stop()                       // immediate shutdown, directory removed
//
// The server itself is tests/lib/pg.sh's (PostgreSQL refuses to run as root,
// so it runs as the `postgres` user; its directory must be a mode-755 dir
// under /tmp). halt/restart call pg_ctl as that user with pg.sh's options.
// Every wait is bounded (pg_ctl -w -t 30). Servers still running when the
// test process exits are stopped by the exit hook.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { freePort } from './harness.mjs';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const PGSH = path.join(here, 'pg.sh');

function pgbin() {
  const vers = fs.existsSync('/usr/lib/postgresql') ? fs.readdirSync('/usr/lib/postgresql').sort((a, b) => b - a) : [];
  for (const v of vers) {
    const d = `/usr/lib/postgresql/${v}/bin`;
    if (fs.existsSync(`${d}/pg_ctl`)) return d;
  }
  return '';
}
const BIN = pgbin();
const asRoot = process.getuid?.() === 0;
const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

/** Run a command line as the server's owner (postgres when we are root). */
function asOwner(cmdline) {
  return asRoot ? run('su', ['postgres', '-s', '/bin/sh', '-c', `cd / && ${cmdline}`], { timeout: 60000 })
    : run('/bin/sh', ['-c', cmdline], { timeout: 60000 });
}

const live = new Set();
process.on('exit', () => {
  for (const dir of live) {
    try { execFileSync('bash', [PGSH, 'stop', dir], { stdio: 'ignore', timeout: 20000 }); } catch {}
  }
});

/** psql against url; returns stdout. */
async function psqlRaw(url, args) {
  const { stdout } = await run('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, ...args],
    { timeout: 60000, maxBuffer: 64 << 20 });
  return stdout;
}

/** Start a cluster; see the top of the file for what it returns. */
export async function startPostgres() {
  const port = await freePort();
  const dir = fs.mkdtempSync('/tmp/sy-pg-');
  fs.chmodSync(dir, 0o755);
  live.add(dir);
  const { stdout } = await run('bash', [PGSH, 'start', dir, String(port)], { timeout: 90000 });
  const url = stdout.trim().split('\n').pop();
  const base = url.replace(/\/[^/]*$/, '');
  const ctl = (what) => asOwner(`${q(`${BIN}/pg_ctl`)} -D ${q(`${dir}/data`)} ${what}`);
  const pg = {
    url, port, dir,
    /** A fresh database named name; its URL. */
    async createDb(name) {
      await psqlRaw(url, ['-c', `CREATE DATABASE "${name}"`]);
      return `${base}/${name}`;
    },
    /** Run sql on dbUrl (default the postgres database). A SELECT / WITH / VALUES
     * statement returns its rows as objects (typed through json_agg); others []. */
    async psql(sql, dbUrl = url) {
      const s = sql.trim().replace(/;\s*$/, '');
      if (/^(select|with|values)\b/i.test(s)) {
        const out = await psqlRaw(dbUrl, ['-A', '-t', '-c', `SELECT coalesce(json_agg(q), '[]'::json) FROM (${s}) q`]);
        return JSON.parse(out.trim() || '[]');
      }
      await psqlRaw(dbUrl, ['-c', s]);
      return [];
    },
    /** Run an SQL file (stops at the first error). */
    async psqlFile(file, dbUrl = url) { await psqlRaw(dbUrl, ['-f', file]); },
    /** Immediate shutdown, keeping the data (clients see their connections reset). */
    async halt() { await ctl('-m immediate -w -t 30 stop').catch(() => {}); },
    /** Start again on the same port (halts first when it is running). */
    async restart() {
      await pg.halt();
      await ctl(`-l ${q(`${dir}/log`)} -w -t 30 -o ${q(`-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`)} start`);
    },
    /** Stop and remove the cluster. */
    async stop() {
      live.delete(dir);
      await run('bash', [PGSH, 'stop', dir], { timeout: 60000 }).catch(() => {});
    },
  };
  return pg;
}
