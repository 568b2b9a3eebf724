// The console's only script (progressive: every page works without it).
// - a form marked data-confirm asks before it is sent (redeliver, delete, end a session);
// - on a page listing YAML errors, focus moves to the list so keyboards and screen readers start there;
// - a <time datetime> the server wrote in UTC is shown in the viewer's own zone, the UTC value on hover;
"use strict";
function localTime(el) {
  var moment = new Date(el.getAttribute("datetime"));
  if (isNaN(moment.getTime())) { return; }
  var utc = el.textContent;
  var parts = {};
  new Intl.DateTimeFormat("en-CA", {year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit",
    minute: "2-digit", second: "2-digit", hour12: false, timeZoneName: "short"})
    .formatToParts(moment).forEach(function (p) { parts[p.type] = p.value; });
  var hour = parts.hour === "24" ? "00" : parts.hour;
  el.textContent = parts.year + "-" + parts.month + "-" + parts.day + " " + hour + ":" + parts.minute + ":" +
    parts.second + " " + parts.timeZoneName;
  el.title = utc;
}
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) { event.preventDefault(); }
    });
  });
  var errors = document.querySelector("ol.errors");
  if (errors) { errors.setAttribute("tabindex", "-1"); errors.focus(); }
  document.querySelectorAll("time[datetime]").forEach(localTime);
  document.documentElement.setAttribute("data-js", "ready");
});
