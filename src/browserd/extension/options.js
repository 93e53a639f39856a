// browserd extension: the options page. Pairing itself runs in the service worker.
"use strict";

const statusBox = document.getElementById("status");

async function showStatus(extra) {
  const s = await chrome.runtime.sendMessage({type: "status"});
  document.getElementById("port").value = s.port;
  let text = !s.paired ? "Not paired yet."
    : s.connected ? `Connected to browserd (profile ${s.profile}); ${s.pinned} tab(s) shared.`
    : `Paired (profile ${s.profile}), not connected: is browserd running on port ${s.port}?`;
  if (s.problem) text += ` ${s.problem}`;
  statusBox.textContent = extra ? `${extra} ${text}` : text;
}

document.getElementById("pair").addEventListener("submit", async (event) => {
  event.preventDefault();
  statusBox.textContent = "Pairing…";
  const code = document.getElementById("code").value.trim();
  const port = Number(document.getElementById("port").value);
  const answer = await chrome.runtime.sendMessage({type: "pair", code, port});
  document.getElementById("code").value = "";
  if (answer && answer.error) statusBox.textContent = `Pairing failed: ${answer.error}`;
  else setTimeout(() => showStatus("Paired."), 500);
});

showStatus();
