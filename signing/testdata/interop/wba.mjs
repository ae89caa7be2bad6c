// Interop driver for signing's TestInterop_D2_NpmWebBotAuth (our own script).
// Reads one JSON job on stdin, writes one JSON answer on stdout.
//   {"mode":"probe"} -> {"ok":true} when the package loads
//   {"mode":"verify","url":...,"headers":{...},"jwk":{public JWK}} -> {"ok":true} | {"error":"..."}
//   {"mode":"sign","url":...,"agent":"\"https://...\"","jwk":{private JWK}} -> {"headers":{...}}
import { verify, signatureHeaders } from "web-bot-auth";
import { verifierFromJWK, signerFromJWK } from "web-bot-auth/crypto";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const job = JSON.parse(input);
try {
  if (job.mode === "probe") {
    console.log(JSON.stringify({ ok: typeof verify === "function" && typeof signerFromJWK === "function" }));
  } else if (job.mode === "verify") {
    const req = new Request(job.url, { headers: job.headers });
    await verify(req, await verifierFromJWK(job.jwk));
    console.log(JSON.stringify({ ok: true }));
  } else {
    const req = new Request(job.url, { headers: { "Signature-Agent": job.agent } });
    const now = new Date();
    const h = await signatureHeaders(req, await signerFromJWK(job.jwk), {
      created: now,
      expires: new Date(now.getTime() + 60_000),
    });
    console.log(JSON.stringify({ headers: { "Signature-Agent": job.agent, ...h } }));
  }
} catch (e) {
  console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
}
