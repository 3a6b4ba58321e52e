// R8a, provably fair deals, as a player's page can check them (protocol 1.3; the scheme is
// server/game/fair.py's, and client_cli/model.py makes the same checks for the terminal):
//
// - we send a fresh random contribution with join, start and rematch, once we have seen the
//   table's next_commitment, and remember both (TableModel.contributing);
// - deals_committed: the match's commitment is the one we saw, and our contribution is at
//   our seat (checkStart, synchronous);
// - match_over: the revealed record.fair hashes back to that commitment, and its seed is
//   SHA-256 of the secret, the salt and the four contributions (checkReveal, asynchronous:
//   crypto.subtle.digest). The deals themselves are not replayed here (that needs a port of
//   Python's random.Random): `aluette-record verify` does that from the downloaded record.

/** fair.SCHEME */
export const SCHEME = "aluette-fair/1";

const HEX = /^[0-9a-f]+$/;
const isHex = (x, n) => typeof x === "string" && HEX.test(x) && (n === undefined || x.length === n);
const isContribution = (x) => x === null || (isHex(x) && x.length <= 64);

/** R8a: this page's contribution to a match's seed, 16 random bytes in lowercase hex. */
export function newContribution() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** SHA-256 of an ASCII string, lowercase hex (fair._sha256). */
export async function sha256(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** fair.commitment */
export const commitmentOf = (secret, salt) => sha256(`aluette-commit/1:${secret}:${salt}`);

/** fair.derive_seed: four seats' contributions, null for none. */
export const seedOf = (secret, salt, contributions) =>
  sha256(`aluette-seed/1:${secret}:${salt}:${contributions.map((c) => c ?? "").join(",")}`);

const short = (hex) => `${String(hex).slice(0, 16)}…`;

/**
 * deals_committed: {ok, text}. `sent` is [seen, mine] (the commitment shown when we
 * contributed, our contribution) or null; `seat` ours or null.
 */
export function checkStart(event, sent, seat) {
  const commitment = String(event.commitment ?? "");
  const words = `Fair deals: match ${event.match ?? "?"} is committed to ${short(commitment)}`;
  if (sent === null || seat === null) return { ok: true, text: `${words}.` };
  const [seen, mine] = sent;
  const problems = [];
  if (seen !== null && seen !== commitment) {
    problems.push("this commitment is not the one the table showed before you contributed "
      + "(the server could have chosen its secret after seeing your contribution)");
  }
  const contributions = Array.isArray(event.contributions) ? event.contributions : [];
  if (contributions[seat] !== mine) problems.push("your contribution is not in it");
  if (problems.length) return { ok: false, text: `Warning: ${words}, but ${problems.join(" and ")}.` };
  return { ok: true, text: `${words}; your contribution is in. The seed will be revealed at `
    + "the end." };
}

/**
 * match_over: the revealed `fair` (record.fair) against `expected`, the commitment the match
 * started with (null if we did not see it). Resolves to {ok, text}; never rejects.
 */
export async function checkReveal(fair, expected = null) {
  const fail = (why) => ({ ok: false, text: `Warning: the record does not prove fair deals `
    + `(R8a): ${why}.` });
  if (!globalThis.crypto?.subtle) {
    // Browsers offer SHA-256 only on https and localhost: a page served over plain http on
    // a network address cannot hash, which says nothing about the deals.
    return { ok: true, text: "Fair deals: this page cannot check the revealed seed here "
      + "(the browser hashes only on https or localhost); `aluette-record verify` on the "
      + "match record does." };
  }
  try {
    if (fair === null || typeof fair !== "object") return fail("it reveals no seed material");
    if (fair.scheme !== SCHEME) return fail(`unknown scheme ${String(fair.scheme).slice(0, 32)}`);
    const { commitment, secret, salt, contributions, seed } = fair;
    if (!isHex(commitment, 64) || !isHex(secret, 64) || !isHex(salt, 32)) {
      return fail("its commitment, secret or salt is not well formed");
    }
    if (!Array.isArray(contributions) || contributions.length !== 4
        || !contributions.every(isContribution)) {
      return fail("its contributions are not four seats' contributions");
    }
    if (await commitmentOf(secret, salt) !== commitment) {
      return fail(`the revealed secret and salt do not match the commitment ${short(commitment)}`);
    }
    if (expected !== null && expected !== commitment) {
      return fail(`its commitment ${short(commitment)} is not the one the match started with, `
        + short(expected));
    }
    if (!isHex(seed, 64)) return fail("it reveals no seed");
    if (await seedOf(secret, salt, contributions) !== seed) {
      return fail("the revealed seed does not follow from the secret, the salt and the "
        + "contributions");
    }
    return { ok: true, text: `Fair deals checked: the seed was committed before the first `
      + `card (${short(commitment)}) and follows from the server's secret and every `
      + "player's contribution." };
  } catch (err) {
    return fail(`the check could not run (${String(err?.message ?? err).slice(0, 80)})`);
  }
}
