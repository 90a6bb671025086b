// Package browser holds the tests that drive a real browser (Debian's
// chromium, through the DevTools protocol with chromedp) over the HTML
// report and spawngate playground: what a person sees, what the page
// requests, what a hostile plan can make it run, and whether it can be
// used from the keyboard.
//
// The tests skip only where no browser is installed, and fail there too
// when SPAWNGATE_BROWSER=require (which .ci/run sets once it has
// installed chromium). SPAWNGATE_BROWSER_PATH names another browser. The
// screenshots go to the folder SPAWNGATE_ARTIFACTS names, else to the
// test's temporary folder; -update also writes the two the docs show
// into docs/img.
package browser
