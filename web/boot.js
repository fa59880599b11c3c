// Presses made before the app has booted are kept, and made again once it
// runs: none is lost (issue 30). The server's page (its shell marked
// data-app="server") shows every button disabled until the app has taken
// the page over; a disabled button gets no click, but the browser still
// tells the document of the pointer going down and up on it. Links work
// before the app, as links: they are left alone.
//
// A kept press is found again in the app's page by where it was: the
// nearest element with an id or an item's data attribute (a list row's
// bundle, tester, build…), then the child positions under it. The app's
// first render draws what the server's page drew, so the path holds.
(() => {
  "use strict";
  const items = ["bundle", "tester", "build", "key", "webhook"];
  const kept = [];
  let down = null;

  const serverButton = (target) => {
    const b = target instanceof Element ? target.closest("button") : null;
    return b && b.closest('[data-app="server"]') ? b : null;
  };

  const place = (el) => {
    const path = [];
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      if (e.id) return { anchor: "#" + CSS.escape(e.id), path };
      for (const item of items) {
        const v = e.dataset ? e.dataset[item] : undefined;
        if (v !== undefined) return { anchor: `[data-${item}="${CSS.escape(v)}"]`, path };
      }
      path.unshift(Array.prototype.indexOf.call(e.parentElement.children, e));
    }
    return null;
  };

  const find = ({ anchor, path }) => {
    let el = document.querySelector('[data-app="client"] ' + anchor);
    for (const i of path) el = el ? el.children[i] : null;
    return el;
  };

  // A press is the pointer going down on a server button and coming up on
  // it; or coming up after the app's first mount replaced the page under
  // it (a hand's press lasts 100 ms or so: the mount can land in between),
  // on the app's own button in the same place. The browser makes no click
  // of that one (down and up fell on different elements), so it is made
  // here, unless the browser made one after all.
  let booted = false;
  document.addEventListener("pointerdown", (e) => {
    const b = e.isPrimary && e.button === 0 ? serverButton(e.target) : null;
    down = b ? { button: b, at: place(b) } : null;
  }, true);
  document.addEventListener("pointerup", (e) => {
    if (!down) return;
    const { button, at } = down;
    down = null;
    if (!at) return;
    if (button.isConnected) {
      if (serverButton(e.target) !== button) return; // dragged off it
      kept.push(at);
      // Seen to be taken: it shows pressed until the app makes it.
      button.classList.add("kept-press");
      return;
    }
    const now = find(at);
    if (!now || !(e.target instanceof Node) || !now.contains(e.target)) return;
    if (booted) {
      made(now);
    } else {
      kept.push(at);
    }
  }, true);

  // made presses el, unless the browser's own click reaches it first (it
  // is dispatched in the same task as the pointerup; this runs after).
  const made = (el) => {
    let clicked = false;
    const saw = (e) => { if (e.isTrusted && el.contains(e.target)) clicked = true; };
    document.addEventListener("click", saw, true);
    setTimeout(() => {
      document.removeEventListener("click", saw, true);
      if (!clicked && el.isConnected && !el.disabled) el.click();
    }, 0);
  };

  // The app calls this once its first page is on screen: each kept press
  // is made on the app's button, in the order they came.
  window.betaportBooted = () => {
    booted = true;
    for (const at of kept.splice(0)) {
      const el = find(at);
      if (el && !el.disabled) el.click();
    }
  };
})();
