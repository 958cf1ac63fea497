DROP TABLE IF EXISTS catalog_products;
