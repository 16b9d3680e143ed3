// A request's page, kept live: subscribe to the request on the service's websocket (/ws)
// and, on each status update, fetch the page's live part again and put it in place. No
// library; nothing loaded from elsewhere.
(function () {
  "use strict";

  var FINAL = ["success", "refund"];
  var section = document.getElementById("progress");
  if (!section || !("WebSocket" in window)) {
    return;
  }
  var requestId = section.dataset.requestId;
  var progressUrl = section.dataset.progressUrl;
  var socket = null;
  var retryMs = 1000;
  var fetching = false;
  var fetchAgain = false;

  function isFinal() {
    return FINAL.indexOf(section.dataset.status) >= 0;
  }

  function say(text) {
    var state = section.querySelector("[data-live-state]");
    if (state) {
      state.textContent = text;
    }
  }

  function replaceWith(html) {
    var holder = document.createElement("div");
    holder.innerHTML = html;
    var fresh = holder.querySelector("#progress");
    if (!fresh) {
      return;
    }
    section.replaceChildren.apply(section, Array.prototype.slice.call(fresh.childNodes));
    section.dataset.status = fresh.dataset.status;
  }

  function refresh() {
    if (fetching) {
      fetchAgain = true;
      return;
    }
    fetching = true;
    fetch(progressUrl, { cache: "no-store", headers: { Accept: "text/html" } })
      .then(function (response) {
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (html !== null) {
          replaceWith(html);
        }
      })
      .catch(function () {})
      .then(function () {
        fetching = false;
        if (fetchAgain) {
          fetchAgain = false;
          refresh();
        } else if (isFinal()) {
          say("final");
          if (socket) {
            socket.close();
          }
        } else {
          say("updates live");
        }
      });
  }

  function onMessage(event) {
    var message;
    try {
      message = JSON.parse(event.data);
    } catch (error) {
      return;
    }
    if (message.type === "subscribe" && message.status === "success") {
      retryMs = 1000;
      refresh(); // anything that changed between the page's rendering and now
    } else if (message.event === "request.status.updated") {
      refresh();
    }
  }

  function connect() {
    if (isFinal()) {
      return;
    }
    var scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(scheme + "//" + window.location.host + "/ws");
    socket.addEventListener("open", function () {
      socket.send(
        JSON.stringify({
          type: "subscribe",
          event: "request.status.updated",
          filters: { id: requestId },
        })
      );
    });
    socket.addEventListener("message", onMessage);
    socket.addEventListener("close", function () {
      socket = null;
      if (!isFinal()) {
        say("reconnecting…");
        window.setTimeout(connect, retryMs);
        retryMs = Math.min(retryMs * 2, 30000);
      }
    });
  }

  connect();
})();
