/*!
 * svc-tracker.js: records a referral click and the browser-mode lead.
 *
 *   <script src="https://track.example.com/js/svc-tracker.js" data-program-id="42"></script>
 *
 * On a page whose URL carries ?aff=<code>, it posts the click to {base}/api/v1/track/click and stores the
 * returned click_id in the first-party cookie svc_click_id (lifetime: the program's cookie_window_days;
 * SameSite=Lax; Secure on HTTPS). A visitor arriving with a different partner's aff gets a new click_id
 * (last touch). After signup, call:
 *
 *   svc.lead({ customer_key: 'user-123', email: 'a@example.com' })  // → Promise<response JSON>
 *
 * which posts a browser-mode lead with the stored click_id. Other attributes: data-test-mode="true" sends
 * test-mode events; data-api="https://..." overrides the base URL (default: where this script came from).
 * The site's origin must be on the program's allowed_origins.
 *
 * Links shared before a move to svc keep working (docs/importing.md "Old links"): data-params="via,ref,fpr,aff"
 * names the query parameters that carry a partner's link code, in order (default: aff); the first one present
 * in the page's URL is sent as the click's aff (Rewardful's ?via=, Tolt's ?ref=, FirstPromoter's ?fpr=).
 *
 * Each click carries an event_id (a UUID minted here); on a network error or a 5xx it is retried once,
 * after Retry-After (at most 5 s), with the same event_id, so the service stores and counts it once.
 *
 * When the clicked partner's group has a discount for the customers it brings, the click's answer carries it:
 * the script keeps it as JSON in the first-party cookie svc_discount (same lifetime), exposes it as
 * `svc.discount` (also `window.svcAffiliate.discount`; null: none) and dispatches `svc:click` on window with
 * `detail: { click_id, discount }`, so the checkout can apply the processor coupon (docs/rewards.md).
 */
(function () {
  'use strict';
  var script = document.currentScript;
  var programId = script && script.getAttribute('data-program-id');
  var testMode = script && script.getAttribute('data-test-mode') === 'true';
  var base = (script && script.getAttribute('data-api')) || (script ? new URL(script.src).origin : '');
  var params = ((script && script.getAttribute('data-params')) || 'aff')
    .split(',')
    .map(function (p) {
      return p.trim();
    })
    .filter(Boolean);
  var COOKIE = 'svc_click_id';
  var DISCOUNT_COOKIE = 'svc_discount';

  function readCookie(name) {
    var m = document.cookie.match(new RegExp('(?:^|; )' + name + '=([^;]*)'));
    return m ? decodeURIComponent(m[1]) : null;
  }
  function writeCookie(name, value, days) {
    var secure = location.protocol === 'https:' ? '; Secure' : '';
    document.cookie =
      name +
      '=' +
      encodeURIComponent(value) +
      '; Max-Age=' +
      days * 86400 +
      '; Path=/; SameSite=Lax' +
      secure;
  }
  function send(path, body) {
    // text/plain keeps it a simple request (no preflight); the service reads the body as JSON.
    return fetch(base + path, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain;charset=UTF-8' },
      body: JSON.stringify(body),
      keepalive: true,
      credentials: 'omit',
    });
  }
  function post(path, body) {
    return send(path, body).then(function (r) {
      return r.json();
    });
  }
  /** One retry on a network error or a 5xx, after Retry-After (at most 5 s): for bodies with an event_id. */
  function postOnceMore(path, body) {
    function retry(seconds) {
      var ms = Math.min(5, seconds > 0 ? seconds : 1) * 1000;
      return new Promise(function (resolve) {
        setTimeout(resolve, ms);
      }).then(function () {
        return post(path, body);
      });
    }
    return send(path, body).then(
      function (r) {
        if (r.status >= 500) return retry(Number(r.headers.get('Retry-After')));
        return r.json();
      },
      function () {
        return retry(1);
      },
    );
  }
  function uuid() {
    var c = typeof crypto !== 'undefined' ? crypto : null;
    if (c && typeof c.randomUUID === 'function') return c.randomUUID();
    var b = new Uint8Array(16);
    if (c && typeof c.getRandomValues === 'function') c.getRandomValues(b);
    else for (var i = 0; i < 16; i++) b[i] = Math.floor(Math.random() * 256);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    var h = '';
    for (var j = 0; j < 16; j++) h += (b[j] + 0x100).toString(16).slice(1);
    return (
      h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20)
    );
  }
  function additional() {
    var ad = {};
    if (programId) ad.program_id = Number(programId);
    if (testMode) ad.test_mode = true;
    return ad;
  }

  /** The page's URL with the link code as `aff` (the first of data-params present), or null: no code. */
  function affiliateUrl() {
    var query = new URLSearchParams(location.search);
    for (var i = 0; i < params.length; i++) {
      var code = query.get(params[i]);
      if (!code) continue;
      if (params[i] === 'aff') return location.href;
      var u = new URL(location.href);
      u.searchParams.set('aff', code);
      return u.href;
    }
    return null;
  }

  function trackClick() {
    var affUrl = affiliateUrl();
    if (!affUrl) return Promise.resolve(null);
    return postOnceMore('/api/v1/track/click', {
      event_id: uuid(),
      affiliate_url: affUrl,
      page_url: location.href,
      page_title: document.title,
      referrer_url: document.referrer || undefined,
      user_agent: navigator.userAgent,
      screen_resolution: screen.width + 'x' + screen.height,
      viewport_size: innerWidth + 'x' + innerHeight,
      language: navigator.language,
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      existing_click_id: readCookie(COOKIE) || undefined,
      additional_data: additional(),
    }).then(function (res) {
      if (res && res.success && res.click_id) {
        var days = res.cookie_window_days || 60;
        writeCookie(COOKIE, res.click_id, days);
        // A partner without a discount replaces one an earlier partner's click left (last touch).
        writeCookie(DISCOUNT_COOKIE, JSON.stringify(res.discount || null), days);
        announce(res.click_id, res.discount || null);
      }
      return res;
    });
  }
  function storedDiscount() {
    try {
      return JSON.parse(readCookie(DISCOUNT_COOKIE) || 'null');
    } catch (e) {
      return null;
    }
  }
  function announce(clickId, discount) {
    if (typeof window.dispatchEvent !== 'function' || typeof CustomEvent !== 'function') return;
    window.dispatchEvent(new CustomEvent('svc:click', { detail: { click_id: clickId, discount: discount } }));
  }

  var clicked = trackClick().catch(function () {
    return null;
  });

  window.svc = {
    clickId: function () {
      return readCookie(COOKIE);
    },
    /** The discount of the partner who brought this visitor (its group's processor coupon), or null. */
    get discount() {
      return storedDiscount();
    },
    /** Browser-mode lead: { customer_key, email?, event_name? } → Promise of the response body. */
    lead: function (opts) {
      opts = opts || {};
      return clicked.then(function () {
        var ad = additional();
        if (opts.event_name) ad.event_name = opts.event_name;
        return post('/api/v1/track/lead', {
          click_id: readCookie(COOKIE) || undefined,
          customer_key: opts.customer_key,
          email: opts.email,
          additional_data: ad,
        });
      });
    },
  };
  window.svcAffiliate = window.svc;
})();
