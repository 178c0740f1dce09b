// Draws the Vehicles page's map with Leaflet (leaflet.js, a module loaded just before this one)
// from the positions the page carries. Markers need no tiles: when the tile host cannot be
// reached they still show on the map's plain background, and the table beside lists the same.
const container = document.getElementById('vehicle-map');
const L = globalThis.L;

/** Leaflet writes attributions as markup; the setting is plain text. */
function escapeHtml(text) {
  const span = document.createElement('span');
  span.textContent = text;
  return span.innerHTML;
}

/** The popup: the vehicle's name, a link to its page, and when it reported the position. */
function popupOf(position) {
  const popup = document.createElement('div');
  const link = document.createElement('a');
  link.href = `/console/vehicles/${position.id}`;
  link.textContent = position.name;
  popup.append(link);
  if (position.at) {
    popup.append(document.createElement('br'), `Position at ${position.at.slice(0, 19).replace('T', ' ')} UTC`);
  }
  return popup;
}

if (container && L) {
  const positions = JSON.parse(container.dataset.positions);
  container.hidden = false;
  // The wheel scrolls the page, as everywhere else in the console; +/− and the keyboard zoom.
  const map = L.map(container, { scrollWheelZoom: false });
  L.tileLayer(container.dataset.tiles, {
    maxZoom: 19,
    attribution: escapeHtml(container.dataset.attribution),
    // The page's own policy (same-origin) would send no Referer; tile servers such as
    // OpenStreetMap's want one, and the console's origin, without its paths, is enough.
    referrerPolicy: 'strict-origin-when-cross-origin',
  }).addTo(map);
  const icon = L.icon({
    iconUrl: container.dataset.marker,
    iconSize: [25, 41],
    iconAnchor: [12, 40],
    popupAnchor: [0, -34],
  });
  const markers = positions.map((position) =>
    L.marker([position.lat, position.lon], { icon, alt: position.name, title: position.name }).bindPopup(
      popupOf(position),
    ),
  );
  const group = L.featureGroup(markers).addTo(map);
  // Room above the top marker for its popup, so opening one rarely has to pan the map.
  map.fitBounds(group.getBounds(), { paddingTopLeft: [48, 112], paddingBottomRight: [48, 32], maxZoom: 13 });
}
