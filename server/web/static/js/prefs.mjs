// The player's table preferences, kept in this browser (localStorage): confirm a card before
// it is played, a sound and a notification when the turn comes while the tab is hidden.

const KEY = "aluette.prefs.v1";

function load() {
  try {
    const data = JSON.parse(localStorage.getItem(KEY) ?? "{}");
    return data && typeof data === "object" ? data : {};
  } catch {
    return {};
  }
}

export const prefs = { confirm: false, sound: false, notify: false, ...load() };

export function savePrefs() {
  try {
    localStorage.setItem(KEY, JSON.stringify(prefs));
  } catch {
    // storage disabled: the choice lasts this page
  }
}

let audio = null;

/** Two short notes (Web Audio: no sound file to load). */
function ring() {
  try {
    audio ??= new AudioContext();
    const now = audio.currentTime;
    for (const [i, freq] of [[0, 660], [1, 880]]) {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.0001, now + i * 0.18);
      gain.gain.exponentialRampToValueAtTime(0.2, now + i * 0.18 + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + i * 0.18 + 0.16);
      osc.connect(gain).connect(audio.destination);
      osc.start(now + i * 0.18);
      osc.stop(now + i * 0.18 + 0.17);
    }
  } catch {
    // no audio here
  }
}

/** The turn came: ring and notify if the player asked for it and is looking elsewhere. */
export function turnAlert(text) {
  if (!document.hidden) return;
  if (prefs.sound) ring();
  if (prefs.notify && typeof Notification !== "undefined" && Notification.permission === "granted") {
    try {
      const note = new Notification("Aluette Online", { body: text, tag: "aluette-turn" });
      note.onclick = () => { window.focus(); note.close(); };
    } catch {
      // notifications not available in this context
    }
  }
}
