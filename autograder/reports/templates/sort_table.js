// Sort a table.sortable by the column whose header is clicked (or given Enter), the other way
// on a second click. A cell's key is its data-sort, else its text; a header with
// data-type="number" compares keys as numbers. Without this script the table keeps the
// order it was written in.
for (const header of document.querySelectorAll("table.sortable thead th")) {
  const sort = () => {
    const table = header.closest("table");
    const body = table.tBodies[0];
    const column = header.cellIndex;
    const numeric = header.dataset.type === "number";
    const ascending = header.getAttribute("aria-sort") !== "ascending";
    const key = (row) => row.cells[column].dataset.sort ?? row.cells[column].textContent;
    const rows = Array.from(body.rows).sort((a, b) => {
      const order = numeric ? Number(key(a)) - Number(key(b)) : key(a).localeCompare(key(b));
      return ascending ? order : -order;
    });
    for (const other of header.parentElement.cells) other.removeAttribute("aria-sort");
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    body.append(...rows);
  };
  header.tabIndex = 0;
  header.addEventListener("click", sort);
  header.addEventListener("keydown", (event) => { if (event.key === "Enter") sort(); });
}
