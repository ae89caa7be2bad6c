// Interop driver for signing's TestInterop_D2_Npm (our own script).
// Reads one JSON job on stdin, writes one JSON answer on stdout:
//   {"mode":"probe"} -> {"ok":true} when the three packages load
//   {"lib":"wba"|"hms"|"rfc","mode":"verify","url":...,"method":...,"headers":{...},
//    "jwk":{public JWK},"components":[...],"label":...} -> {"ok":true} | {"error":"..."}
//   {"lib":...,"mode":"sign","url":...,"method":...,"headers":{...},"jwk":{private JWK},
//    "components":[...],"label":...,"keyid":...,"nonce":...} -> {"headers":{...}}
// lib: wba = web-bot-auth (Cloudflare), hms = http-message-sig,
// rfc = http-message-signatures (plain RFC 9421).
import { verify as wbaVerify, signatureHeaders as wbaSign } from "web-bot-auth";
import { verifierFromJWK, signerFromJWK } from "web-bot-auth/crypto";
import * as hms from "http-message-sig";
import { httpbis, createSigner, createVerifier } from "http-message-signatures";
import { createPrivateKey, createPublicKey } from "node:crypto";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const job = JSON.parse(input);

// "signature-agent;key=sig1" -> component("signature-agent", {key: "sig1"})
function hmsComponent(c) {
  const m = /^([^;]+);key=(.+)$/.exec(c);
  return m ? hms.component(m[1], { key: m[2] }) : c;
}

async function run() {
  const now = Math.floor(Date.now() / 1000);
  if (job.mode === "probe") {
    return { ok: typeof wbaVerify === "function" && typeof hms.verifySignature === "function" && typeof httpbis.verifyMessage === "function" };
  }
  const method = job.method || "GET";
  if (job.lib === "wba" && job.mode === "verify") {
    await wbaVerify(new Request(job.url, { method, headers: job.headers }), await verifierFromJWK(job.jwk));
    return { ok: true };
  }
  if (job.lib === "wba" && job.mode === "sign") {
    const req = new Request(job.url, { method, headers: job.headers });
    const h = await wbaSign(req, await signerFromJWK(job.jwk), {
      created: new Date(now * 1000),
      expires: new Date((now + 60) * 1000),
    });
    return { headers: { ...job.headers, ...h } };
  }
  if (job.lib === "hms" && job.mode === "verify") {
    const key = await crypto.subtle.importKey("jwk", job.jwk, { name: "Ed25519" }, false, ["verify"]);
    const v = await hms.verifySignature(new Request(job.url, { method, headers: job.headers }), {
      label: job.label,
      policy: {
        algorithms: ["ed25519"],
        requiredComponents: job.components.map(hmsComponent),
        requiredParameters: ["created", "expires", "keyid", "tag"],
      },
      resolveVerifier: () => hms.webcrypto.verifier(key),
    });
    return { ok: true, tag: v.parameters.tag };
  }
  if (job.lib === "hms" && job.mode === "sign") {
    const key = await crypto.subtle.importKey("jwk", job.jwk, { name: "Ed25519" }, false, ["sign"]);
    const req = new Request(job.url, { method, headers: job.headers });
    const f = await hms.createSignature(req, {
      label: job.label,
      components: job.components.map(hmsComponent),
      parameters: { created: now, expires: now + 60, keyid: job.keyid, nonce: job.nonce, tag: "web-bot-auth" },
      signer: hms.webcrypto.signer(key),
    });
    return { headers: { ...job.headers, "Signature": f.signature, "Signature-Input": f.signatureInput } };
  }
  if (job.lib === "rfc" && job.mode === "verify") {
    const pub = createPublicKey({ key: job.jwk, format: "jwk" });
    const ok = await httpbis.verifyMessage({
      keyLookup: async () => ({ id: job.keyid, algs: ["ed25519"], verify: createVerifier(pub, "ed25519") }),
    }, { method, url: job.url, headers: job.headers });
    return ok ? { ok: true } : { error: "verifyMessage returned " + ok };
  }
  if (job.lib === "rfc" && job.mode === "sign") {
    const priv = createPrivateKey({ key: job.jwk, format: "jwk" });
    const req = { method, url: job.url, headers: { ...job.headers } };
    const signed = await httpbis.signMessage({
      key: createSigner(priv, "ed25519", job.keyid),
      name: job.label,
      fields: job.components,
      params: ["created", "expires", "keyid", "tag"],
      paramValues: { created: new Date(now * 1000), expires: new Date((now + 60) * 1000), tag: "web-bot-auth" },
    }, req);
    return { headers: signed.headers };
  }
  throw new Error("unknown job " + job.lib + "/" + job.mode);
}

try {
  console.log(JSON.stringify(await run()));
} catch (e) {
  console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
}
