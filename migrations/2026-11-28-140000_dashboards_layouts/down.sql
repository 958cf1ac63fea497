DROP TABLE dashboard_user_widgets;
DROP TABLE dashboard_role_widgets;
DROP TABLE dashboard_layouts;
